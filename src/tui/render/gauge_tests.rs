//! Tests of the context gauge: its labels, snapshots at several widths, where the ticks and the
//! fill land, and any size drawn safely.

use super::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

fn model(context: u64, estimated: bool, mode: GaugeMode) -> GaugeModel {
    GaugeModel {
        context,
        window: 200_000,
        at: 150_000,
        warn_at: 130_000,
        estimated,
        mode,
        masked: 0,
    }
}

/// The six cases, one a row: ok, warn, due, over, writing, estimated.
fn cases() -> [(&'static str, GaugeModel); 6] {
    [
        ("ok", model(60_000, false, GaugeMode::Normal)),
        ("warn", model(130_000, false, GaugeMode::Normal)),
        ("due", model(152_000, false, GaugeMode::Normal)),
        ("over", model(204_500, false, GaugeMode::Normal)),
        ("writing", model(152_000, false, GaugeMode::Writing)),
        ("estimated", model(131_200, true, GaugeMode::Normal)),
    ]
}

fn draw_all(w: u16, theme: &Theme) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, 6)).unwrap();
    t.draw(|f| {
        for (y, (_, g)) in cases().iter().enumerate() {
            render_gauge(g, Rect::new(0, y as u16, w, 1), f.buffer_mut(), theme);
        }
    })
    .unwrap();
    t
}

#[test]
fn labels() {
    let labels: Vec<String> = cases().iter().map(|(_, g)| gauge_label(g)).collect();
    assert_eq!(
        labels,
        [
            "60.0K/200K · 90.0K to handoff",
            "130.0K/200K · 20.0K to handoff",
            "152.0K/200K · handoff due",
            "204.5K/200K · over the window",
            "152.0K/200K · writing handoff…",
            "~131.2K/200K · ~18.8K to handoff",
        ]
    );
    let zones: Vec<Zone> = cases().iter().map(|(_, g)| g.zone()).collect();
    assert_eq!(
        zones,
        [
            Zone::Ok,
            Zone::Warn,
            Zone::Due,
            Zone::Over,
            Zone::Due,
            Zone::Warn
        ]
    );
    let g = model(130_000, false, GaugeMode::Normal);
    assert_eq!(gauge_label_fit(&g, 100), "130.0K/200K · 20.0K to handoff");
    assert_eq!(gauge_label_fit(&g, 25), "130.0K/200K · 20.0K left");
    assert_eq!(gauge_label_fit(&g, 12), "130.0K/200K");
    assert_eq!(gauge_label_fit(&g, 5), "65%");
    assert_eq!(gauge_label_fit(&g, 2), "");
}

#[test]
fn gauge_snapshots() {
    let dark = Theme::builtin("dark").unwrap();
    insta::assert_snapshot!("gauge_40", draw_all(40, &dark).backend());
    insta::assert_snapshot!("gauge_120", draw_all(120, &dark).backend());
    insta::assert_debug_snapshot!("gauge_40_styled", draw_all(40, &dark).backend().buffer());
    insta::assert_snapshot!("gauge_250", draw_all(250, &dark).backend());
    insta::assert_snapshot!("gauge_24", draw_all(24, &dark).backend());
    insta::assert_snapshot!("gauge_40_plain", draw_all(40, &Theme::plain()).backend());
}

#[test]
fn ticks_and_fill_land_where_they_should() {
    let dark = Theme::builtin("dark").unwrap();
    // A 100-cell bar (no label at this width? label needs room: force bar-only with a wide label).
    let g = model(100_000, false, GaugeMode::Normal);
    let mut buf = Buffer::empty(Rect::new(0, 0, 20, 1));
    draw_bar(&g, 0, 0, 20, &mut buf, &dark);
    let sym = |x: u16| buf[(x, 0)].symbol().to_string();
    // 100K of 200K over 20 cells: 10 full cells.
    assert_eq!((0..10).filter(|&x| sym(x) == "█").count(), 10);
    assert_eq!(sym(10), "░");
    assert_eq!(sym(13), "│", "warn tick at 130K/200K × 20");
    assert_eq!(sym(15), "┃", "handoff tick at 150K/200K × 20");
    assert_eq!(sym(19), "┃", "hard limit at the end");
    assert_eq!(buf[(15, 0)].fg, dark.tick.fg.unwrap());
    assert_eq!(buf[(3, 0)].fg, dark.gauge_ok.fg.unwrap());
}

#[test]
fn any_size_is_safe() {
    let dark = Theme::builtin("dark").unwrap();
    let odd = [
        GaugeModel {
            context: 5,
            window: 0,
            at: 0,
            warn_at: 0,
            estimated: true,
            mode: GaugeMode::Normal,
            masked: 0,
        },
        GaugeModel {
            context: u64::MAX,
            window: 1,
            at: 10_000,
            warn_at: 1_000,
            estimated: false,
            mode: GaugeMode::Writing,
            masked: u64::MAX,
        },
        GaugeModel {
            context: 0,
            window: 40_000,
            at: 30_000,
            warn_at: 10_000,
            estimated: false,
            mode: GaugeMode::Normal,
            masked: 0,
        },
    ];
    for (w, h) in [(0u16, 0u16), (1, 1), (2, 1), (11, 1), (20, 5), (250, 1)] {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| {
            for g in odd.iter().chain(cases().iter().map(|(_, g)| g)) {
                render_gauge(g, f.area(), f.buffer_mut(), &dark);
            }
        })
        .unwrap();
    }
    // Width 1: one bar cell, no label.
    let mut buf = Buffer::empty(Rect::new(0, 0, 1, 1));
    render_gauge(&cases()[0].1, Rect::new(0, 0, 1, 1), &mut buf, &dark);
    assert_eq!(buf[(0, 0)].symbol(), "┃");
}

#[test]
fn what_masking_saves_shows_in_the_widest_label_only() {
    let g = GaugeModel {
        masked: 48_200,
        ..model(60_000, false, GaugeMode::Normal)
    };
    assert_eq!(
        gauge_label(&g),
        "60.0K/200K · 90.0K to handoff · 48.2K masked"
    );
    // The layout's widths are those without the savings: a narrower gauge drops them first.
    let plain = model(60_000, false, GaugeMode::Normal);
    assert_eq!(gauge_min_width(&g, true), gauge_min_width(&plain, true));
    assert_eq!(gauge_min_width(&g, false), gauge_min_width(&plain, false));
    let dark = Theme::builtin("dark").unwrap();
    let rows: Vec<String> = [90u16, 50]
        .into_iter()
        .map(|w| {
            let mut t = Terminal::new(TestBackend::new(w, 1)).unwrap();
            t.draw(|f| render_gauge(&g, Rect::new(0, 0, w, 1), f.buffer_mut(), &dark))
                .unwrap();
            let buf = t.backend().buffer();
            (0..w).map(|x| buf[(x, 0)].symbol().to_string()).collect()
        })
        .collect();
    assert!(
        rows[0].contains("60.0K/200K · 90.0K to handoff · 48.2K masked"),
        "{rows:?}"
    );
    assert!(
        rows[1].contains("60.0K/200K") && !rows[1].contains("masked"),
        "{rows:?}"
    );
    insta::assert_snapshot!(rows.join("\n"));
}
