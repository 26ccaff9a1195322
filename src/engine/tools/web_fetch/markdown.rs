//! A page's main content as Markdown. The HTML is parsed once (html5ever, through `htmd`); the
//! main content is the page's `<main>` (or `role="main"`), else its largest `<article>`, else
//! its `<body>` without the site's header and footer. Scripts, styles, navigation, forms,
//! embedded frames and hidden elements are dropped; headings, lists, links, code blocks and
//! tables are kept (`htmd`, turndown's rules).

use std::rc::Rc;

use htmd::{HtmlToMarkdown, Node};
use markup5ever_rcdom::NodeData;

/// Elements never part of the content, wherever they are.
const DROP: &[&str] = &[
    "script", "style", "noscript", "template", "iframe", "frame", "frameset", "object", "embed",
    "svg", "canvas", "nav", "form", "button", "select", "input", "textarea", "dialog", "link",
    "meta",
];
/// Elements dropped when the content is the whole body (the site's frame around the content).
const FRAME: &[&str] = &["header", "footer", "aside"];

/// A converted page: its title and its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub title: Option<String>,
    pub markdown: String,
}

/// `html` as Markdown: the main content only.
pub fn convert(html: &str) -> Page {
    let converter = HtmlToMarkdown::builder().skip_tags(DROP.to_vec()).build();
    let Ok(doc) = converter.html_to_tree(html) else {
        return Page {
            title: None,
            markdown: String::new(),
        };
    };
    let title = find(&doc, &|n| tag(n) == Some("title")).map(|t| text_of(&t));
    let title = title
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|t| !t.is_empty());
    let main = find(&doc, &|n| {
        tag(n) == Some("main") || attr(n, "role").as_deref() == Some("main")
    })
    .or_else(|| largest_article(&doc));
    let (root, whole_body) = match main {
        Some(m) => (m, false),
        None => match find(&doc, &|n| tag(n) == Some("body")) {
            Some(body) => (body, true),
            None => (doc.clone(), true),
        },
    };
    prune(&root, whole_body);
    Page {
        title,
        markdown: tidy(&converter.tree_to_markdown(&root)),
    }
}

/// The element's tag name (lower case, as html5ever gives it).
fn tag(n: &Node) -> Option<&str> {
    match &n.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

fn attr(n: &Node, key: &str) -> Option<String> {
    match &n.data {
        NodeData::Element { attrs, .. } => attrs
            .borrow()
            .iter()
            .find(|a| &*a.name.local == key)
            .map(|a| a.value.to_string()),
        _ => None,
    }
}

/// The first node (depth first) that `pred` accepts.
fn find(root: &Rc<Node>, pred: &dyn Fn(&Node) -> bool) -> Option<Rc<Node>> {
    let mut stack = vec![root.clone()];
    while let Some(n) = stack.pop() {
        if pred(&n) {
            return Some(n);
        }
        let children = n.children.borrow();
        stack.extend(children.iter().rev().cloned());
    }
    None
}

/// The `<article>` with the most text.
fn largest_article(root: &Rc<Node>) -> Option<Rc<Node>> {
    let mut best: Option<(usize, Rc<Node>)> = None;
    let mut stack = vec![root.clone()];
    while let Some(n) = stack.pop() {
        if tag(&n) == Some("article") {
            let len = text_of(&n).len();
            if best.as_ref().is_none_or(|(b, _)| len > *b) {
                best = Some((len, n.clone()));
            }
            continue;
        }
        stack.extend(n.children.borrow().iter().cloned());
    }
    best.map(|(_, n)| n)
}

/// All the text under a node.
fn text_of(root: &Rc<Node>) -> String {
    let mut out = String::new();
    let mut stack = vec![root.clone()];
    while let Some(n) = stack.pop() {
        if let NodeData::Text { contents } = &n.data {
            out.push_str(&contents.borrow());
        }
        stack.extend(n.children.borrow().iter().rev().cloned());
    }
    out
}

/// Whether an element is hidden from readers (`hidden`, `aria-hidden="true"`, `display:none`).
fn hidden(n: &Node) -> bool {
    attr(n, "hidden").is_some()
        || attr(n, "aria-hidden").as_deref() == Some("true")
        || attr(n, "style").is_some_and(|s| {
            let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
            s.to_ascii_lowercase().contains("display:none")
        })
}

/// Remove what is not content under `root`: [`DROP`] everywhere, hidden elements, and the
/// [`FRAME`] elements when `root` is the whole body.
fn prune(root: &Rc<Node>, whole_body: bool) {
    let mut stack = vec![root.clone()];
    while let Some(n) = stack.pop() {
        n.children.borrow_mut().retain(|c| match tag(c) {
            Some(t) => !(DROP.contains(&t) || hidden(c) || (whole_body && FRAME.contains(&t))),
            None => true,
        });
        stack.extend(n.children.borrow().iter().cloned());
    }
}

/// At most one blank line in a row, no trailing spaces.
fn tidy(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut blank = 0;
    for line in md.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_content_is_kept_and_the_rest_dropped() {
        let html = r#"<!doctype html><html><head><title> Guide  to X </title>
            <style>body{color:red}</style><script>var secret = 1;</script></head>
            <body><header><a href="/">Site</a></header><nav><a href="/a">Menu</a></nav>
            <main><h1>Install</h1><p>Run <code>x init</code>, see <a href="https://x.dev/docs">the docs</a>.</p>
            <ul><li>one</li><li>two</li></ul>
            <pre><code class="language-sh">x build --release
</code></pre>
            <table><tr><th>flag</th><th>meaning</th></tr><tr><td>-v</td><td>verbose</td></tr></table>
            <div hidden>hidden text</div><script>alert("in main")</script></main>
            <footer>Copyright</footer></body></html>"#;
        let page = convert(html);
        assert_eq!(page.title.as_deref(), Some("Guide to X"));
        let md = &page.markdown;
        assert!(md.starts_with("# Install"), "{md}");
        assert!(md.contains("[the docs](https://x.dev/docs)"), "{md}");
        assert!(md.contains("`x init`"), "{md}");
        assert!(md.contains("one") && md.contains("two"), "{md}");
        assert!(md.contains("```"), "{md}");
        assert!(md.contains("x build --release"), "{md}");
        assert!(
            md.contains("| flag | meaning |") || md.contains("| flag |"),
            "{md}"
        );
        for gone in [
            "secret",
            "alert",
            "Menu",
            "Site",
            "Copyright",
            "hidden text",
            "color:red",
        ] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
    }

    #[test]
    fn without_main_the_body_loses_its_frame() {
        let html = "<body><header>Top bar</header><h2>Notes</h2><p>Body text.</p>\
                    <aside>Ads</aside><footer>Bottom</footer></body>";
        let page = convert(html);
        assert_eq!(page.title, None);
        assert_eq!(page.markdown, "## Notes\n\nBody text.");
        let articles = "<body><article><p>short</p></article>\
                        <article><h1>Long one</h1><p>much more text here</p></article></body>";
        assert!(convert(articles).markdown.starts_with("# Long one"));
    }
}
