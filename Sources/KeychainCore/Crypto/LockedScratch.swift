/// One wipeable buffer (``SecureHeap``) that a single read reuses for every record it opens.
///
/// A listing opens the attributes of thousands of rows; a locked allocation and its wipe for
/// each was a tenth of the work. The buffer grows to the largest record, is overwritten by
/// each, and is wiped when the scratch goes away. Not shared: one read owns it.
final class LockedScratch {
    private var buffer: UnsafeMutableRawBufferPointer?

    /// The first `count` bytes of the buffer, grown first if needed, for `body` to fill and read.
    func withBuffer<R, E: Error>(count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        if let current = buffer, current.count < count {
            SecureHeap.free(current)
            buffer = nil
        }
        if buffer == nil { buffer = SecureHeap.allocate(max(count, 1)) }
        return try body(UnsafeMutableRawBufferPointer(rebasing: buffer![0..<count]))
    }

    deinit {
        if let buffer { SecureHeap.free(buffer) }
    }
}
