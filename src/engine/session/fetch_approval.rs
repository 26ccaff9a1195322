//! A `web_fetch` call's approval, beside the session's approvals: what its URL says before
//! anyone is asked, and what its host's name resolves to once the call would be made anyway.
//!
//! The name is resolved only where the fetch would follow — the call runs unasked (`--yes`, a
//! grant for its host), or the user approved it — never before the question: a name the model
//! chose could carry data to its own name server. A host on a loopback, private or link-local
//! address that `[web] allow_private_hosts` does not list is approved call by call: neither
//! `--yes` nor "always" covers it, a headless run denies it (saying why), and a name found
//! private only after the user approved the call is asked about once more, with the warning.
//! A URL that fails anyway (not http(s), a secret in it) fails unasked.

use std::future::Future;

use serde_json::Value;

use super::approval_state::Decision;
use crate::engine::protocol::Event;
use crate::engine::tools::web_fetch::{self, WebAccess};
use crate::engine::tools::{ToolError, names};

/// What is known of one `web_fetch` call's host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FetchCheck {
    /// Why its host must be approved call by call (None: public or listed, as far as known).
    private: Option<String>,
    /// Whether there is nothing more to learn (its name was resolved, or it is private already).
    known: bool,
}

impl FetchCheck {
    /// The check of a call of `name` (None: not a `web_fetch`), from its URL alone; the error
    /// is the result of a call that fails anyway.
    pub(super) fn before_asking(
        name: &str,
        input: &Value,
        access: &WebAccess,
    ) -> Result<Option<FetchCheck>, ToolError> {
        if name != names::WEB_FETCH {
            return Ok(None);
        }
        let private = web_fetch::before_asking(input, access)?;
        Ok(Some(FetchCheck {
            known: private.is_some(),
            private,
        }))
    }

    /// Its host must be approved call by call.
    pub(super) fn is_private(&self) -> bool {
        self.private.is_some()
    }

    /// Its host's name is still to be resolved.
    pub(super) fn needs_lookup(&self) -> bool {
        !self.known
    }

    /// The lookup of the call's host (a DNS query): why it is private, or None. Owns what it
    /// needs, so the engine can abort it.
    pub(super) fn lookup(
        input: &Value,
        access: &WebAccess,
    ) -> impl Future<Output = Option<String>> + Send + 'static {
        let (input, access) = (input.clone(), access.clone());
        async move { web_fetch::private_reason(&input, &access).await }
    }

    /// What the lookup found.
    pub(super) fn looked_up(&mut self, private: Option<String>) {
        self.private = private;
        self.known = true;
    }

    /// The question about the call, with the warning when its host is private.
    pub(super) fn warn(&self, question: &mut Event) {
        if let (Some(why), Event::ApprovalRequest { summary, .. }) = (&self.private, question) {
            summary.push_str(&format!(" — ⚠ {why}: approved call by call"));
        }
    }

    /// Why a run that cannot ask denies the call, when its host is private.
    pub(super) fn denial(&self) -> Option<String> {
        self.private.as_ref().map(|why| {
            format!(
                "denied: {why}; only the user can approve that, call by call (or list the host \
                 in `[web] allow_private_hosts`), and this headless run cannot ask."
            )
        })
    }

    /// The decision for the call: an approval of a private host lets the fetch reach it.
    pub(super) fn decided(&self, decision: Decision) -> Decision {
        match decision {
            Decision::Allow if self.is_private() => Decision::AllowPrivate,
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_what_the_url_says_is_known_before_asking() {
        let access = WebAccess::default();
        let check =
            |url: &str| FetchCheck::before_asking("web_fetch", &json!({ "url": url }), &access);
        assert!(matches!(
            FetchCheck::before_asking("read_file", &json!({}), &access),
            Ok(None)
        ));
        let public = check("https://docs.rs/x").unwrap().unwrap();
        assert!(!public.is_private() && public.needs_lookup());
        let metadata = check("http://169.254.169.254/latest/").unwrap().unwrap();
        assert!(metadata.is_private() && !metadata.needs_lookup());
        assert!(matches!(
            metadata.decided(Decision::Allow),
            Decision::AllowPrivate
        ));
        assert!(metadata.denial().unwrap().contains("link-local"));
        assert!(check("file:///etc/passwd").is_err());
        let mut q = Event::ApprovalRequest {
            id: "f1".into(),
            name: "web_fetch".into(),
            summary: "web_fetch: http://169.254.169.254/latest/".into(),
            outside_workspace: true,
            command: None,
            diff: None,
            always: None,
            unsandboxed: None,
        };
        metadata.warn(&mut q);
        let Event::ApprovalRequest { summary, .. } = q else {
            unreachable!()
        };
        assert!(summary.ends_with("cloud metadata service) address: approved call by call"));
    }
}
