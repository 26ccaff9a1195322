//! The integration suite, one module per area.

mod provider;
