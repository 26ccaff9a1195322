//! `/model` with no name: the picker of models. It opens at once on the models known here (the
//! one in use, those the custom commands name) while the engine asks the provider for the models
//! it offers; their list joins when it comes (or why it did not is said in the picker, whole).
//! Up and Down move, Home and End jump to the first and the last, Enter uses the highlighted
//! model from the next request on (`Op::SetModel`, as `/model NAME` does), Esc closes. The one
//! in use is marked and picking it changes nothing.

use crate::engine::protocol::Op;

/// The model picker, while it is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ModelPicker {
    /// The model in use (the first row).
    current: String,
    /// The models offered: the one in use, the provider's, then the others known here.
    models: Vec<String>,
    /// The highlighted row.
    selected: usize,
    /// The provider's list has not come yet.
    waiting: bool,
    /// Why the provider's list is missing, when it is.
    missing: Option<String>,
}

impl ModelPicker {
    /// The picker on `current`, with the other models `known` here; the op asks the engine for
    /// the provider's list.
    pub(crate) fn open(current: &str, known: impl IntoIterator<Item = String>) -> (Self, Op) {
        let mut p = ModelPicker {
            current: current.to_string(),
            models: vec![current.to_string()],
            selected: 0,
            waiting: true,
            missing: None,
        };
        p.add(known);
        (p, Op::ListModels)
    }

    /// Models not listed yet join the list, after the others.
    fn add(&mut self, models: impl IntoIterator<Item = String>) {
        for m in models {
            let m = m.trim();
            if !m.is_empty() && !self.models.iter().any(|x| x == m) {
                self.models.push(m.to_string());
            }
        }
    }

    /// The provider's answer: its models come right after the one in use (the others known
    /// here after them); `error` says why there are none.
    pub(crate) fn offered(&mut self, models: Vec<String>, error: Option<String>) {
        let highlighted = self.models.get(self.selected).cloned();
        let known = self.models.split_off(1);
        self.add(models);
        self.add(known);
        self.selected = highlighted
            .and_then(|h| self.models.iter().position(|m| *m == h))
            .unwrap_or(0);
        self.waiting = false;
        self.missing = error;
    }

    /// The models listed, in order.
    pub(crate) fn models(&self) -> &[String] {
        &self.models
    }

    /// Whether `model` is the one in use.
    pub(crate) fn is_current(&self, model: &str) -> bool {
        model == self.current
    }

    /// The highlighted row.
    pub(crate) fn selected(&self) -> usize {
        self.selected
    }

    /// What the picker says under its list: the provider's list awaited, or why it is missing.
    pub(crate) fn status(&self) -> Option<String> {
        if self.waiting {
            return Some("asking the provider for its models…".into());
        }
        self.missing
            .as_ref()
            .map(|why| format!("the provider did not list its models: {why}"))
    }

    /// The selection moves one row down (or up), wrapping around.
    pub(crate) fn step(&mut self, next: bool) {
        let n = self.models.len().max(1);
        self.selected = if next {
            (self.selected + 1) % n
        } else {
            (self.selected + n - 1) % n
        };
    }

    /// Home or End: the first row, or the last.
    pub(crate) fn jump(&mut self, last: bool) {
        self.selected = if last {
            self.models.len().saturating_sub(1)
        } else {
            0
        };
    }

    /// Enter: the highlighted model from the next request on (None: it is the one in use).
    pub(crate) fn choose(&self) -> Option<Op> {
        self.models
            .get(self.selected)
            .filter(|m| !self.is_current(m))
            .map(|model| Op::SetModel {
                model: model.clone(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_providers_models_join_after_the_one_in_use_and_enter_picks() {
        let (mut p, op) = ModelPicker::open("claude-a", ["claude-cmd".to_string()]);
        assert_eq!(op, Op::ListModels);
        assert_eq!(p.models(), ["claude-a", "claude-cmd"]);
        assert!(p.status().is_some_and(|s| s.contains("asking")));
        p.step(true);
        p.offered(
            vec!["claude-b".into(), "claude-a".into(), "claude-c".into()],
            None,
        );
        assert_eq!(
            p.models(),
            ["claude-a", "claude-b", "claude-c", "claude-cmd"]
        );
        assert_eq!(
            p.selected(),
            3,
            "the highlight stays on the model it was on"
        );
        assert_eq!(p.status(), None);
        p.step(true);
        assert_eq!(
            p.choose(),
            None,
            "wrapped to the one in use: nothing changes"
        );
        p.step(true);
        assert_eq!(
            p.choose(),
            Some(Op::SetModel {
                model: "claude-b".into()
            })
        );
        p.step(false);
        p.step(false);
        assert_eq!(p.selected(), 3);
    }

    #[test]
    fn a_provider_that_cannot_list_leaves_the_known_models_and_says_why() {
        let (mut p, _) = ModelPicker::open("m1", Vec::new());
        p.offered(Vec::new(), Some("404 not found".into()));
        assert_eq!(p.models(), ["m1"]);
        assert_eq!(
            p.status().as_deref(),
            Some("the provider did not list its models: 404 not found")
        );
    }
}
