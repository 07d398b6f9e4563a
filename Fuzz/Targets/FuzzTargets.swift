import Foundation
@_spi(Fuzzing) import KeychainCLI
@_spi(Fuzzing) import KeychainCore
@_spi(Fuzzing) import KeychainServe
@_spi(Fuzzing) import Locksmith

#if os(Linux)
    @_spi(Fuzzing) import Security
#endif

/// Every parser of untrusted bytes we have, as libFuzzer targets (scripts/fuzz.sh builds and
/// runs them; FuzzRegressionTests replays the corpus and every crash ever found).
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// The vault header read from a vault file.
    case header
    /// Decrypted attribute records.
    case attributes
    /// The kernel-keyring cache payload.
    case cache
    /// The presence key record.
    case presence
    /// Locksmith's keyed-archive payload.
    case payload
    /// The command line of `keychain`: arguments separated by NUL bytes.
    case arguments
    /// The item ledger, the generation table and the size padding.
    case state
    /// What sync reads from etcd and its journal: JSON answers, changes, member lists, state, codes.
    case sync
    /// SecItem dictionaries as callers of the Security module pass them.
    case query
    /// Method calls to `keychain serve`'s handlers from several clients, in sequence.
    case daemon

    /// Feeds `bytes` to the parser. Crashing (or tripping a sanitizer) is the only failure.
    @discardableResult
    public func run(_ bytes: [UInt8]) -> Bool {
        switch self {
        case .header: FuzzEntryPoints.vaultHeader(bytes)
        case .attributes: FuzzEntryPoints.attributes(bytes)
        case .cache: FuzzEntryPoints.cachePayload(bytes)
        case .presence: FuzzEntryPoints.presenceKeyRecord(bytes)
        case .payload: LocksmithFuzzEntryPoints.payload(bytes)
        case .state: FuzzEntryPoints.vaultState(bytes)
        case .sync: FuzzEntryPoints.syncRecords(bytes)
        case .query:
            #if os(Linux)
                SecurityFuzzEntryPoints.query(bytes)
            #else
                false
            #endif
        case .daemon: ServeFuzzEntryPoints.handlers(bytes)
        case .arguments: KeychainCommand.parseOnly(bytes.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) })
        }
    }
}

private let selectedTarget = FuzzTarget(rawValue: ProcessInfo.processInfo.environment["FUZZ_TARGET"] ?? "") ?? .header

/// libFuzzer's entry point; the target is chosen by `FUZZ_TARGET`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selectedTarget.run(bytes)
    return 0
}

/// libFuzzer's start, before any input: one empty input sets up what the target keeps for the
/// whole process (the daemon's vault, OpenSSL's generator), so that the leak check of the
/// inputs after it sees only what they leave behind.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    selectedTarget.run([])
    return 0
}
