import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Key buffers are kept out of core dumps (vault-format issue, finding 10).
@Suite("Secrets in memory: the secure heap", .serialized)
struct SecretMemoryTests {
    /// The kernel's flags for the mapping that holds `address` (`VmFlags` in /proc/self/smaps).
    func mappingFlags(of address: UInt) throws -> [Substring] {
        // Read to the end: /proc files report a size of 0, and a sized read stops early.
        let smaps = String(decoding: try #require(FileHandle(forReadingAtPath: "/proc/self/smaps")).readDataToEndOfFile(), as: UTF8.self)
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inside = bounds.count == 2 && bounds[0] <= address && address < bounds[1]
            } else if inside, line.hasPrefix("VmFlags:") {
                return fields.dropFirst().map { $0 }
            }
        }
        return []
    }

    @Test("keys, passphrases and values are held in memory the kernel leaves out of core dumps (MADV_DONTDUMP)")
    func secretsAreNotDumped() throws {
        #expect(SecureHeap.isAvailable)
        // Other suites run alongside and may hold the arena full for a moment (it then falls
        // back to the ordinary heap, as `fallsBackWhenFull` shows): wait for room.
        var held: SecretBytes?
        for _ in 0..<200 {
            let secret = SecretBytes(utf8: "a passphrase")
            if secret.withUnsafeBytes({ SecureHeap.contains($0.baseAddress!) }) { held = secret; break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let secret = try #require(held, "the secure heap stayed full for 4 s")
        let address = secret.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let flags = try mappingFlags(of: address)
        #expect(flags.contains("dd"), "VmFlags of the mapping holding a SecretBytes: \(flags)")
    }

    @Test("secrets that fill the secure heap never starve OpenSSL, which needs it for its random generators")
    func fullHeapLeavesOpenSSLItsShare() throws {
        let held = (0..<8_000).map { SecretBytes(utf8: "value \($0) " + String(repeating: "x", count: 64)) }
        #expect(held.count == 8_000)
        #expect(SecretBytes.random(count: 32).count == 32)
        let directory = TemporaryDirectory()
        let vault = try Vault(VaultConfiguration(location: VaultLocation(path: directory.vaultPath()), usesKernelKeyring: false))
        try vault.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: SecretBytes(utf8: "v")))
        #expect(try vault.copyMatching(Query(.genericPassword, returnData: true)).first?.value?.string == "v")
    }

    @Test("beyond the secure heap, secrets still work, on the ordinary heap")
    func fallsBackWhenFull() {
        let large = SecretBytes(count: SecureHeap.size * 2) { $0[0] = 7 }
        #expect(large.count == SecureHeap.size * 2 && large.withUnsafeBytes { $0[0] } == 7)
        #expect(!large.withUnsafeBytes { SecureHeap.contains($0.baseAddress!) })
    }

    @Test("a value loses its size padding where it was opened: the content stays, the bytes after it are wiped")
    func truncationWipesTheTail() throws {
        let content: [UInt8] = Array("hunter2".utf8)
        let padded = content.withUnsafeBytes { SizePadding.pad($0) }
        // The buffer stays allocated while `padded` lives, so its tail can be read afterwards.
        let base = padded.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!) }
        let paddedCount = padded.count
        let unpadded = try #require(SizePadding.unpad(padded))
        #expect(unpadded === padded, "no second buffer")
        #expect(unpadded.withUnsafeBytes { Array($0) } == content)
        #expect(UnsafeRawBufferPointer(start: base + content.count, count: paddedCount - content.count).allSatisfy { $0 == 0 }, "the padding marker is wiped")
        withExtendedLifetime(padded) {}
    }
}
