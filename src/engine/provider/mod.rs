//! Model providers: a trait the session loop streams through, and its implementations.

pub mod anthropic;
pub mod error;
pub mod http;
pub mod known_windows;
pub(crate) mod length;
pub mod openai;
pub(crate) mod overflow;
pub mod probe;
pub mod retry;
pub mod sse;
pub(crate) mod text_calls;
pub(crate) mod tls;
pub(crate) mod vision;

use std::future::Future;
use std::pin::Pin;

pub use error::{ErrorKind, ProviderError};

use super::types::{Delta, ModelRequest, ModelResponse};

/// Set `key` on a JSON object; anything else is left alone (every body built here is an object, and
/// `value[key] = …` would panic on anything but an object or null).
pub(crate) fn set(obj: &mut serde_json::Value, key: &str, value: serde_json::Value) {
    if let Some(o) = obj.as_object_mut() {
        o.insert(key.to_owned(), value);
    }
}

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Receives streamed pieces of a response as they arrive.
pub(crate) type DeltaSink<'a> = &'a mut (dyn FnMut(Delta) + Send);

/// A model API. Dropping the returned future aborts the request.
pub trait Provider: Send + Sync {
    /// `anthropic`, `openai` or `demo`.
    fn name(&self) -> &str;
    /// The endpoint base URL (for `-v`).
    fn endpoint(&self) -> String;
    fn stream<'a>(
        &'a self,
        req: &'a ModelRequest,
        sink: DeltaSink<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ProviderError>>;
    /// Whether requests for `model` may carry images ([`vision`]): not a text-only model by
    /// name, nor one whose server refused an image.
    fn takes_images(&self, model: &str) -> bool {
        !vision::text_only(model)
    }
    /// Images were left out of a request for `model` (`refused`: its server refused one just
    /// now, so none is sent from now on). True when the user should hear of it (the first time).
    fn images_left_out(&self, _model: &str, _refused: bool) -> bool {
        false
    }
    /// The models the provider offers (`GET /v1/models`), for `/model`'s picker; none where it
    /// has no such list (the demo).
    fn models(&self) -> BoxFuture<'_, Result<Vec<String>, ProviderError>> {
        Box::pin(async { Ok(Vec::new()) })
    }
}
