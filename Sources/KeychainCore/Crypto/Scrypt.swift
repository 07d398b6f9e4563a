internal import COpenSSL

/// scrypt (RFC 7914) through OpenSSL's `EVP_PBE_scrypt`.
public struct ScryptParameters: Sendable, Hashable {
    /// log2 of the CPU/memory cost N.
    public var logN: UInt8
    /// The block size; the vault accepts only 8.
    public var r: UInt32
    /// The parallelism; the vault accepts only 1.
    public var p: UInt32

    /// Parameters for N = 2^`logN`, block size `r` and parallelism `p`.
    public init(logN: UInt8, r: UInt32 = 8, p: UInt32 = 1) {
        self.logN = logN
        self.r = r
        self.p = p
    }

    /// N=2^17, r=8, p=1: 128 MiB and about half a second on our machines.
    public static let `default` = ScryptParameters(logN: 17)
    /// The weakest parameters the vault accepts, whether creating or reading a header.
    public static let minimum = ScryptParameters(logN: 14)
    /// The strongest a header may ask for: N=2^18 with r=8 is 256 MiB and about a second here,
    /// so a forged header cannot make an unlock take minutes and gigabytes.
    public static let maximum = ScryptParameters(logN: 18)
    /// The most memory a derivation may take.
    public static let maximumMemory: UInt64 = maximum.memoryRequired

    /// The memory scrypt needs: 128·r·N for V plus 128·r·p for B.
    public var memoryRequired: UInt64 {
        guard logN < 64 else { return .max }
        let n = UInt64(1) << UInt64(logN)
        let (v, o1) = UInt64(128).multipliedReportingOverflow(by: UInt64(r))
        let (vn, o2) = v.multipliedReportingOverflow(by: n)
        let (b, o3) = v.multipliedReportingOverflow(by: UInt64(p))
        let (total, o4) = vn.addingReportingOverflow(b)
        return (o1 || o2 || o3 || o4) ? .max : total
    }

    /// Whether these are parameters the vault uses: r=8 and p=1 (fixed, as RFC 7914
    /// recommends), N from 2^14 to 2^18.
    public var isWithinLimits: Bool {
        r == 8 && p == 1 && (Self.minimum.logN...Self.maximum.logN).contains(logN)
    }
}

enum Scrypt {
    static func deriveKey(passphrase: SecretBytes, salt: [UInt8], parameters: ScryptParameters, count: Int = 32) throws(OpenSSLError) -> SecretBytes {
        precondition(parameters.isWithinLimits)
        // maxmem must be passed explicitly: OpenSSL's default of 0 means a 32 MiB cap.
        let maxmem = parameters.memoryRequired + (1 << 20)
        return try SecretBytes(count: count) { (out: UnsafeMutableRawBufferPointer) throws(OpenSSLError) in
            var empty: CChar = 0
            let ok = passphrase.withUnsafeBytes { pass in
                salt.withUnsafeBufferPointer { s in
                    EVP_PBE_scrypt(
                        pass.baseAddress?.assumingMemoryBound(to: CChar.self) ?? withUnsafePointer(to: &empty) { $0 }, pass.count,
                        s.baseAddress, s.count,
                        UInt64(1) << UInt64(parameters.logN), UInt64(parameters.r), UInt64(parameters.p), maxmem,
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), count)
                }
            }
            guard ok == 1 else { throw OpenSSLError("EVP_PBE_scrypt") }
        }
    }
}
