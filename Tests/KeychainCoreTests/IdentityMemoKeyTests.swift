import Testing

@testable import KeychainCore

/// The identity memo's own rule of when it forgets: a digest is served only under the lookup
/// key it was made with, so that no caller has to remember to forget it when keys change.
@Suite("The identity memo serves a digest only under the lookup key it was made with")
struct IdentityMemoKeyTests {
    static let key = IdentityMemoKey(itemClass: .genericPassword, attributes: Attributes(service: "s", account: "a"))

    static func lookupKey(_ byte: UInt8) -> HMACKey { HMACKey(SecretBytes([UInt8](repeating: byte, count: 32))) }

    /// The digest of ``key`` under `lookup`, and whether the memo computed it.
    static func digest(_ memo: inout IdentityMemo, under lookup: HMACKey) throws -> (digest: [UInt8], computed: Bool) {
        var computed = false
        let digest = try memo.digest(of: key, under: lookup) { (lookup) throws(StoreError) in
            computed = true
            return lookup.authenticationCode(Array("identity".utf8))
        }
        return (digest, computed)
    }

    @Test("the same lookup key is answered from memory")
    func sameKeyIsRemembered() throws {
        var memo = IdentityMemo()
        let lookup = Self.lookupKey(1)
        #expect(try Self.digest(&memo, under: lookup).computed)
        #expect(try !Self.digest(&memo, under: lookup).computed)
    }

    @Test("another lookup key (a rotation, or one rolled back) gets its own digest, and the old key's are forgotten")
    func anotherKeyForgetsTheOld() throws {
        var memo = IdentityMemo()
        let old = Self.lookupKey(1), new = Self.lookupKey(2)
        let first = try Self.digest(&memo, under: old)
        let second = try Self.digest(&memo, under: new)
        #expect(second.computed && second.digest != first.digest, "a digest under a retired key is never served under the new one")
        let back = try Self.digest(&memo, under: old)
        #expect(back.computed && back.digest == first.digest, "a rotation rolled back computes again under the old key")
    }

    @Test("a key freed and another made in its place are not taken for one another")
    func aFreedKeyIsNotReused() throws {
        var memo = IdentityMemo()
        var first: [UInt8] = []
        do {
            let retired = Self.lookupKey(1)
            first = try Self.digest(&memo, under: retired).digest
        }
        let replacement = Self.lookupKey(3)
        let next = try Self.digest(&memo, under: replacement)
        #expect(next.computed && next.digest != first)
    }
}
