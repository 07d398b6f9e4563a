extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that keeps the body's typed error (the standard one only rethrows).
    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { bytes in
            do throws(E) { return .success(try body(bytes)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// `value`'s bytes, most significant first, as the vault's and sync's formats store integers.
    init<T: FixedWidthInteger>(bigEndian value: T) {
        self.init()
        reserveCapacity(T.bitWidth / 8)
        appendBigEndian(value)
    }

    /// Appends `value`'s bytes, most significant first, as the vault's formats store integers.
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        var remaining = T.bitWidth
        while remaining > 0 {
            remaining -= 8
            append(UInt8(truncatingIfNeeded: value >> remaining))
        }
    }
}
