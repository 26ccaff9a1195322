//! Skill names and the description taken from the body.

use super::*;

#[test]
fn names_follow_the_agent_skills_rule() {
    for good in ["pdf", "pdf-tools", "a1-b2", &"a".repeat(64)] {
        assert!(valid_name(good), "{good}");
    }
    for bad in [
        "",
        "PDF",
        "pdf_tools",
        "-pdf",
        "pdf-",
        "pdf--tools",
        "pdf tools",
        &"a".repeat(65),
    ] {
        assert!(!valid_name(bad), "{bad}");
    }
}

#[test]
fn the_first_paragraph_stands_in_for_a_missing_description() {
    assert_eq!(
        first_paragraph("\n# Title\n\nFirst line\nsecond line.\n\nNext paragraph.").as_deref(),
        Some("First line second line.")
    );
    assert_eq!(first_paragraph("# Only a heading\n\n"), None);
    assert_eq!(first_paragraph(""), None);
}
