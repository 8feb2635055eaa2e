use super::*;
use crate::core::record::is_uuid;

#[test]
fn formats_the_bytes_as_a_v4_uuid() {
    let bytes = [
        0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32,
        0x10,
    ];
    assert_eq!(uuid_v4(bytes), "01234567-89ab-4def-bedc-ba9876543210");
}

#[test]
fn version_and_variant_bits_are_set_whatever_the_bytes() {
    for fill in [0x00u8, 0xff, 0x5a] {
        let k = uuid_v4([fill; 16]);
        assert!(is_uuid(&k), "{k}");
        assert_eq!(&k[14..15], "4", "{k}");
        assert!(matches!(&k[19..20], "8" | "9" | "a" | "b"), "{k}");
    }
    assert_eq!(uuid_v4([0; 16]), "00000000-0000-4000-8000-000000000000");
    assert_eq!(uuid_v4([0xff; 16]), "ffffffff-ffff-4fff-bfff-ffffffffffff");
}
