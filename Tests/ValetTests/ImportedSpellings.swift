import Foundation
import Valet

/// Compiles only if the public surface spells what Swift code calls in Valet 5 and what Swift
/// imports from Valet 2's header: each line is code written for Valet on Apple platforms.
func valetSpellings(username: String) throws {
    let myValet = VALValet(identifier: "Druidia", accessibility: .whenUnlocked)!
    _ = myValet.setString("12345", forKey: username)
    let myLuggageCombination: String? = myValet.string(forKey: username)
    _ = myValet.removeObject(forKey: username)
    let shared = VALValet(sharedAccessGroupIdentifier: "Druidia", accessibility: .afterFirstUnlock)
    let synchronized = VALSynchronizableValet(identifier: "Druidia", accessibility: .whenUnlocked)
    let enclave = VALSecureEnclaveValet(identifier: "Druidia", accessControl: .userPresence)
    _ = enclave?.string(forKey: username, userPrompt: "Unlock the air shield")
    let single = VALSinglePromptSecureEnclaveValet(identifier: "Druidia", accessControl: .touchIDAnyFingerprint)
    single?.requirePromptOnNextAccess()
    let error: Error? = myValet.migrateObjects(matchingQuery: [kSecClass as String: kSecClassGenericPassword], removeOnCompletion: false)
    let allKeys: Set<AnyHashable> = myValet.allKeys()
    _ = (myLuggageCombination, shared, synchronized, error, allKeys, VALMigrationErrorDomain, VALAccessControl.devicePasscode)

    let valet = Valet.valet(with: Identifier(nonEmpty: "Druidia")!, accessibility: .whenUnlocked)
    try valet.migrateObjects(
        matching: [kSecClass as String: kSecClassGenericPassword, kSecAttrSynchronizable as String: kCFBooleanTrue],
        removeOnCompletion: false)
    _ = kCFBooleanFalse
    let secureEnclaveValet = SecureEnclaveValet.valet(with: Identifier(nonEmpty: "Druidia")!, accessControl: .userPresence)
    _ = try secureEnclaveValet.string(forKey: username)
    _ = try secureEnclaveValet.object(forKey: username)
    let singlePrompt = SinglePromptSecureEnclaveValet.valet(with: Identifier(nonEmpty: "Druidia")!, accessControl: .userPresence)
    _ = try singlePrompt.string(forKey: username)
    _ = try singlePrompt.allKeys()
}
