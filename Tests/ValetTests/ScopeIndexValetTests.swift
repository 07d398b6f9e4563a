import Foundation
import KeychainTestSupport
import Testing
import Valet

import enum KeychainCore.FailureLog
import enum KeychainCore.StoreError

/// A logout clean-up (`removeAllObjects`) over an edited scope
/// index throws instead of leaving a secret behind, and `allKeys` never answers short.
@Suite("Valet over an edited scope index")
struct ScopeIndexValetTests {
    @Test(
        "allKeys and removeAllObjects throw couldNotAccessKeychain (tampered, says FailureLog); the hidden key's secret is still read by its key",
        arguments: ScopeIndexEdit.allCases)
    func removeAllObjectsRefuses(_ edit: ScopeIndexEdit) throws {
        let fixture = try Fixture()
        let valet = fixture.valet("Valet1")
        try valet.setString("secret-first", forKey: "first")
        try valet.setString("secret-second", forKey: "second")
        try fixture.valet("Other").setString("secret-third", forKey: "third")
        try edit.apply(to: try #require(fixture.vault).location.path, row: 1, other: 3)

        #expect(throws: KeychainError.couldNotAccessKeychain) { _ = try valet.allKeys() }
        #expect(throws: KeychainError.couldNotAccessKeychain) { try valet.removeAllObjects() }
        if case .tampered(let why)? = FailureLog.last {
            #expect(why.contains("scope"), "\(why)")
        } else {
            Issue.record("FailureLog.last: \(String(describing: FailureLog.last))")
        }
        #expect(try valet.string(forKey: "first") == "secret-first", "nothing was removed")
    }
}
