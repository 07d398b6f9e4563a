import Foundation
import KeychainCore
import Valet

/// A child with nothing but the default store: a Valet made before the store is opened and an
/// equal one made after must be one object, equal and hashed alike.
enum ValetIdentityWorker {
    static func run() -> Int32 {
        let before = Valet.valet(with: Identifier(nonEmpty: "Identity")!, accessibility: .whenUnlocked)
        _ = try? before.containsObject(forKey: "k")  // opens the default store
        let after = Valet.valet(with: Identifier(nonEmpty: "Identity")!, accessibility: .whenUnlocked)
        let enclaveBefore = SecureEnclaveValet.valet(with: Identifier(nonEmpty: "Identity")!, accessControl: .userPresence)
        let singleBefore = SinglePromptSecureEnclaveValet.valet(with: Identifier(nonEmpty: "Identity")!, accessControl: .userPresence)
        _ = try? enclaveBefore.containsObject(forKey: "k")
        let enclaveAfter = SecureEnclaveValet.valet(with: Identifier(nonEmpty: "Identity")!, accessControl: .userPresence)
        let singleAfter = SinglePromptSecureEnclaveValet.valet(with: Identifier(nonEmpty: "Identity")!, accessControl: .userPresence)
        let same = before === after && enclaveBefore === enclaveAfter && singleBefore === singleAfter
        let equal = before.isEqual(after) && enclaveBefore.isEqual(enclaveAfter) && singleBefore.isEqual(singleAfter)
        let words = [
            same ? "identical" : "distinct", equal ? "equal" : "unequal",
            before.hash == after.hash ? "hashed" : "unhashed", "set=\(Set([before, after]).count)",
        ]
        print(words.joined(separator: " "))
        return 0
    }
}

/// A service as systemd would start one: nothing but Valet's own API, with the passphrase (if
/// any) in `$CREDENTIALS_DIRECTORY/keychain-passphrase`. Prints the value, or the error.
enum ValetServiceWorker {
    static func run(identifier: String, key: String) -> Int32 {
        let valet = Valet.valet(with: Identifier(nonEmpty: identifier)!, accessibility: .whenUnlocked)
        do {
            print(try valet.string(forKey: key))
            return 0
        } catch {
            print("error: \(error); reason: \(FailureLog.last?.description ?? "none recorded")")
            return 1
        }
    }
}
