extension Array where Element == UInt8 {
    /// `withUnsafeBytes` that keeps the body's typed error (the standard one only rethrows).
    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = withUnsafeBytes { bytes in
            do throws(E) { return .success(try body(bytes)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
