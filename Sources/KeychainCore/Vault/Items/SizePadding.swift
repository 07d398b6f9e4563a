/// Pads what format 2 seals to a size bucket, so that a ciphertext's length tells only the
/// bucket, not the exact length of a password or of an item's names: 32 bytes, then each power
/// of two up to 16 KiB, then multiples of 16 KiB. The padding is ISO/IEC 7816-4 (a 0x80 byte,
/// then zeros), inside the authenticated plaintext.
enum SizePadding {
    static func bucket(for count: Int) -> Int {
        let needed = count + 1
        if needed <= 32 { return 32 }
        if needed <= 16_384 { return 1 << (Int.bitWidth - (needed - 1).leadingZeroBitCount) }
        return (needed + 16_383) / 16_384 * 16_384
    }

    static func pad(_ bytes: UnsafeRawBufferPointer) -> SecretBytes {
        SecretBytes(count: bucket(for: bytes.count)) { out in
            if let base = bytes.baseAddress { out.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
            // The rest is already zero.
            out[bytes.count] = 0x80
        }
    }

    /// The content of padded bytes, or nil when the padding is malformed (which, inside an
    /// authenticated plaintext, only a format bug or a forgery with the keys can cause).
    ///
    /// `padded` is cut to its content where it lies (`SecretBytes.truncate(to:)`): pass bytes
    /// just opened and not yet shared. A copy was a second locked allocation on every read.
    static func unpad(_ padded: SecretBytes) -> SecretBytes? {
        guard let count = padded.withUnsafeBytes({ contentCount($0) }) else { return nil }
        padded.truncate(to: count)
        return padded
    }

    static func contentCount(_ padded: UnsafeRawBufferPointer) -> Int? {
        // The zeros after the marker fill most of a bucket: skip them a word at a time.
        var end = padded.count
        while end >= 8, padded.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self) == 0 { end -= 8 }
        var index = end - 1
        while index >= 0 && padded[index] == 0 { index -= 1 }
        guard index >= 0, padded[index] == 0x80 else { return nil }
        return index
    }
}
