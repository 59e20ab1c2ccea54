//! A Rust program whose global allocator is corealloc: its boxes are
//! corealloc's blocks and corealloc's statistics count them. One test in
//! this program, so nothing else allocates while it reads the statistics.
use corealloc::Corealloc;

#[global_allocator]
static GLOBAL: Corealloc = Corealloc;

/// A byte count of the statistics report.
fn stat(key: &str) -> usize {
    let json = corealloc::stats_json();
    let field = format!("\"{}\":", key);
    let at = json.find(&field).unwrap_or_else(|| panic!("no {} in {}", key, json)) + field.len();
    let digits: String = json[at..].chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().unwrap()
}

const BOXES: usize = 1000;
const SIZE: usize = 1000;

#[test]
fn boxes_come_from_corealloc_and_its_statistics_count_them() {
    let in_use = stat("in_use_bytes");
    let held = stat("held_bytes");
    let boxes: Vec<Box<[u8; SIZE]>> = (0..BOXES).map(|i| Box::new([i as u8; SIZE])).collect();
    let in_use_with_boxes = stat("in_use_bytes");
    assert!(in_use_with_boxes >= in_use + BOXES * SIZE,
            "in use: {} before the boxes, {} with them", in_use, in_use_with_boxes);
    assert!(stat("held_bytes") >= held + BOXES * SIZE);
    for (i, b) in boxes.iter().enumerate() {
        assert!(corealloc::usable_size(b.as_ptr()) >= SIZE, "box {} is not a block of corealloc's", i);
        assert_eq!(b[SIZE - 1], i as u8);
    }
    drop(boxes);
    let in_use_after = stat("in_use_bytes");
    assert!(in_use_after + BOXES * SIZE <= in_use_with_boxes,
            "in use: {} with the boxes, {} after", in_use_with_boxes, in_use_after);
}
