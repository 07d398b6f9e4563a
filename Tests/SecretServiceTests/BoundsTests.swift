import Foundation
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// Each Secret Service operation ends within its timeout, as a whole, whatever the daemon does;
/// a write it could not confirm is reported as such; timeouts are validated.
@Suite(
    "Secret Service operations are bounded in time, and say what they know", .serialized,
    .enabled(if: PrivateSecretService.unavailableReason == nil, "\(PrivateSecretService.unavailableReason ?? "")"))
struct BoundsTests {
    let directory = TemporaryDirectory()

    func worker(_ arguments: [String], environment: [String: String]) throws -> (elapsed: Double, outcome: String, fields: [String: String]) {
        let result = try Subprocess.run(
            KeychainExecutable.reliabilityPath, ["worker"] + arguments,
            environment: environment.merging(["PATH": "/usr/bin:/bin", "HOME": directory.path]) { $1 })
        let fields = Dictionary(
            uniqueKeysWithValues: result.output.split(whereSeparator: \.isWhitespace).compactMap { field -> (String, String)? in
                let pair = field.split(separator: "=", maxSplits: 1)
                return pair.count == 2 ? (String(pair[0]), String(pair[1])) : nil
            })
        #expect(result.status == 0, "\(result.stderr)")
        return (Double(fields["elapsed"] ?? "") ?? .infinity, fields["outcome"] ?? result.stderr, fields)
    }

    @Test("16 callers on Dispatch's global pool, daemon frozen: every one gives up within its 1 s timeout")
    func concurrentCallersOnAFrozenDaemon() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        kill(service.keyringPID, SIGSTOP)
        defer { kill(service.keyringPID, SIGCONT) }
        let (elapsed, outcome, _) = try worker(["ss-callers", "16", "1"], environment: service.environment)
        #expect(elapsed < 2.0, "the slowest caller took \(elapsed) s")
        #expect(outcome == "unavailable", "\(outcome)")
    }

    @Test("a batch whose daemon freezes mid-way ends within the timeout and says the change is unknown or partly applied")
    func frozenBatch() throws {
        let service = try PrivateSecretService()
        defer { service.stop() }
        defer { kill(service.keyringPID, SIGCONT) }
        let (elapsed, outcome, fields) = try worker(["ss-batch", "\(service.keyringPID)", "400", "1", "0.15"], environment: service.environment)
        #expect(elapsed < 1.7, "the batch took \(elapsed) s with a 1 s timeout")
        if outcome == "outcomeUnknown" { #expect(fields["rechecked"] == "1", "the unconfirmed add is looked up again once the daemon answers") }
        // Frozen during a write: unknown; during a read after some adds: partly applied (nothing
        // can be undone once the deadline passed); before anything: unavailable. Never "ok" or a hang.
        #expect(["outcomeUnknown", "partlyApplied", "unavailable"].contains(outcome), "\(outcome)")
    }

    @Test("KEYCHAIN_TIMEOUT is a number of seconds from 0.01 to 3600; anything else is a usage error, never a trap or a silent default")
    func timeoutValidation() throws {
        for text in ["1e10", "1e100", "inf", "-1", "NaN", "5s", "abc", "0.0001", "0"] {
            let result = try KeychainExecutable.run(
                ["get", "--backend", "secret-service", "--service", "s", "a"],
                environment: ["KEYCHAIN_TIMEOUT": text], home: directory.path)
            #expect(result.status == 2 && result.stderr.contains("KEYCHAIN_TIMEOUT"), "'\(text)': \(result.status) \(result.stderr)")
        }
        #expect(try SecretServiceStore.Configuration.timeout(parsing: "2.5") == .milliseconds(2500))
        #expect(SecretServiceStore.Configuration(timeout: .seconds(10_000_000_000)).timeout == .seconds(3600))
        #expect(SecretServiceStore.Configuration(timeout: .zero).timeout == .milliseconds(10))
        #expect(SecretServiceStore.Configuration(timeout: .seconds(-5)).timeout == .milliseconds(10))
    }

    @Test(
        "a huge configured timeout is clamped and the store works",
        .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
    func hugeTimeoutDoesNotTrap() throws {
        let store = try SecretServiceStore(.init(timeout: .seconds(10_000_000_000), partition: "huge-timeout-" + UUID().uuidString))
        #expect(try !store.contains(Query(.genericPassword, attributes: Attributes(service: "s"))))
    }

    @Test("a missing bus socket is 'no D-Bus session bus', not an I/O error")
    func missingBusSocket() throws {
        let result = try KeychainExecutable.run(
            ["get", "--backend", "secret-service", "--service", "s", "a"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory.path)/no-such-bus"], home: directory.path)
        #expect(result.status == 4 && result.stderr.contains("no D-Bus session bus"), "\(result.stderr)")
        #expect(!result.stderr.contains("I/O error"))
    }

    @Test(
        "an unconfirmed write is looked up again by the next call that reaches the daemon: applied or not",
        .enabled(if: SecretServiceEnvironment.isAvailable, "\(SecretServiceEnvironment.unavailableReason ?? "")"))
    func unconfirmedWritesAreRechecked() throws {
        let store = try SecretServiceStore(.init(partition: "recheck-" + UUID().uuidString))
        defer { _ = try? store.delete(Query()) }
        let present = Item(.genericPassword, attributes: Attributes(service: "s", account: "present"), value: SecretBytes(utf8: "v"))
        try store.add(present)
        store.remember(.add(present), at: 0)
        store.remember(.add(Item(.genericPassword, attributes: Attributes(service: "s", account: "absent"), value: SecretBytes(utf8: "v"))), at: 1)
        store.remember(.delete(Query(identifying: present)), at: 2)
        #expect(store.takeRecheckedWrites().isEmpty, "nothing is re-checked before a call reaches the daemon")
        _ = try store.contains(Query(.genericPassword))
        #expect(store.takeRecheckedWrites() == [.init(operation: 0, applied: true), .init(operation: 1, applied: false), .init(operation: 2, applied: false)])
        #expect(store.takeRecheckedWrites().isEmpty, "taken once")
    }

    @Test("errors are told apart by GError domain and code, not by words in their messages")
    func classificationByCode() {
        func classify(_ domain: String, _ code: Int32, _ message: String) -> StoreError {
            SecretServiceCall.classify(LibSecret.GError(domain: domain, code: code, message: message), what: "test")
        }
        #expect(classify("secret-error", 2, "Cannot do it") == .collectionLocked("default"))
        #expect(classify("g-dbus-error-quark", 2, "no luck") == .unavailable("no Secret Service is running on the session bus (start GNOME Keyring, KWallet or KeePassXC)"))
        if case .io = classify("g-io-error-quark", 0, "the locked door was closed") {} else { Issue.record("a message with 'locked' and 'closed' is not a lock") }
        #expect(SecretServiceCall.isTimeout(LibSecret.GError(domain: "g-io-error-quark", code: 24, message: "")))
        #expect(!SecretServiceCall.isTimeout(LibSecret.GError(domain: "g-io-error-quark", code: 1, message: "timed out")))
    }
}
