//! The ways through the safety net that a hostile pass found, each reproduced for real: on the
//! kernel (sockets, metadata, a workspace moved aside, the user's terminal), through the real
//! binary (a command file's grants, headless text output). Each test failed before its fix.

mod commands;
mod headless_text;
mod metadata;
mod moved;
mod sockets;
mod terminal;
