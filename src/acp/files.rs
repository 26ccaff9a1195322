//! The file tools through the editor, when it offers `fs/read_text_file` and
//! `fs/write_text_file`: the agent reads the editor's unsaved buffers, and its edits land in the
//! editor (and its undo history). The engine calls these from its blocking pool; each call is a
//! request on the connection, awaited there with a time limit. An editor that has gone away
//! leaves the tools on the disk.

use std::io;
use std::path::Path;
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use agent_client_protocol::{Client, JsonRpcRequest};

use crate::engine::text_files::TextFiles;

/// How long a file request may take before the tool gives up on the editor.
const ANSWER_WITHIN: Duration = Duration::from_secs(30);

/// The editor's file access for one session.
pub(super) struct ClientFiles {
    pub(super) cx: ConnectionTo<Client>,
    pub(super) session: SessionId,
    pub(super) read: bool,
    pub(super) write: bool,
    pub(super) runtime: tokio::runtime::Handle,
}

impl ClientFiles {
    /// Send `request` and wait for its answer (on this blocking thread). None: the editor is gone.
    fn call<R>(&self, request: R) -> Option<io::Result<R::Response>>
    where
        R: JsonRpcRequest + Send + 'static,
        R::Response: Send + 'static,
    {
        if self.cx.is_incoming_closed() {
            return None;
        }
        let (tx, rx) = std_mpsc::sync_channel(1);
        let cx = self.cx.clone();
        self.runtime.spawn(async move {
            let _ = tx.send(cx.send_request(request).block_task().await);
        });
        match rx.recv_timeout(ANSWER_WITHIN) {
            Ok(Ok(answer)) => Some(Ok(answer)),
            Ok(Err(_)) if self.cx.is_incoming_closed() => None,
            Ok(Err(e)) => Some(Err(io::Error::other(format!("the editor said: {e}")))),
            Err(std_mpsc::RecvTimeoutError::Timeout) => Some(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the editor did not answer within {}s",
                    ANSWER_WITHIN.as_secs()
                ),
            ))),
            Err(std_mpsc::RecvTimeoutError::Disconnected) => None,
        }
    }
}

impl TextFiles for ClientFiles {
    fn read(&self, path: &Path) -> Option<io::Result<String>> {
        if !self.read {
            return None;
        }
        let request = ReadTextFileRequest::new(self.session.clone(), path);
        self.call(request).map(|r| r.map(|answer| answer.content))
    }

    fn write(&self, path: &Path, text: &str) -> Option<io::Result<()>> {
        if !self.write {
            return None;
        }
        let request = WriteTextFileRequest::new(self.session.clone(), path, text);
        self.call(request).map(|r| r.map(|_| ()))
    }
}
