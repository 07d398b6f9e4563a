internal import COpenSSL

/// OpenSSL's CSPRNG (`RAND_bytes`).
enum Random {
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard buffer.count > 0 else { return }
        // RAND_bytes only fails when the CSPRNG cannot be seeded; continuing would produce
        // predictable keys, so this is a fatal environment error, not a recoverable one.
        guard RAND_bytes(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1 else {
            fatalError("OpenSSL RAND_bytes failed: the system CSPRNG is unavailable")
        }
    }

    static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }

    /// A uniform integer in `0..<upperBound`, by rejection sampling (no modulo bias).
    static func uniform(below upperBound: UInt32) -> UInt32 {
        precondition(upperBound > 0)
        let limit = UInt32.max - UInt32.max % upperBound
        while true {
            var value: UInt32 = 0
            withUnsafeMutableBytes(of: &value) { fill($0) }
            if value < limit { return value % upperBound }
        }
    }
}
