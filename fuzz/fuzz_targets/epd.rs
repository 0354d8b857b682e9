//! EPD parsing must never panic; an accepted record writes back to one that reads the same.
#![no_main]
use arbiter_rules::epd::Epd;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(epd) = Epd::parse(text) {
        let _ = epd.moves("bm");
        let again = Epd::parse(&epd.to_string()).expect("written EPD reads back");
        assert_eq!(again.position, epd.position);
    }
});
