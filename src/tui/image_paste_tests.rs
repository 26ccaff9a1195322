//! Reducer tests of images in the TUI: Ctrl-V asks the app for the clipboard's image, which comes
//! back as an `@"path"` in the input (or a notice saying why not); an attached image shows as its
//! chip.

use std::path::PathBuf;
use std::time::Instant;

use crate::engine::protocol::{Event, TurnId};

use super::msg::{Effect, Msg};
use super::render::cell::Cell;
use super::test_support::{ctrl, ev, last_cell, state, type_text};
use super::update::update;

#[test]
fn ctrl_v_pastes_the_clipboard_image_as_a_mention_of_its_file() {
    let t0 = Instant::now();
    let mut s = state();
    type_text(&mut s, "what is wrong here? ", t0);
    let fx = update(&mut s, ctrl('v'), t0);
    assert!(fx.contains(&Effect::PasteImage), "{fx:?}");
    let path = PathBuf::from("/tmp/flower-pasted/pasted-1.png");
    update(&mut s, Msg::ImagePasted(Ok(path)), t0);
    assert_eq!(
        s.input.text(),
        "what is wrong here? @\"/tmp/flower-pasted/pasted-1.png\" "
    );
    update(
        &mut s,
        Msg::ImagePasted(Err("the clipboard holds no image".into())),
        t0,
    );
    assert!(matches!(last_cell(&s), Cell::Notice { message }
        if message == "no image pasted: the clipboard holds no image"));
}

#[test]
fn an_attached_image_shows_as_its_chip() {
    let t0 = Instant::now();
    let mut s = state();
    update(
        &mut s,
        ev(Event::Attachment {
            turn: TurnId(1),
            path: "shot.png".into(),
            attached: true,
            summary: "[image: shot.png 1429×804]".into(),
        }),
        t0,
    );
    assert!(
        matches!(last_cell(&s), Cell::Notice { message } if message == "[image: shot.png 1429×804]")
    );
}
