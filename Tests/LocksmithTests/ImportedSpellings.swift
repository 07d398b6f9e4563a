import Foundation
import Locksmith

// Locksmith 3's README spellings are declared unavailable with Locksmith 4's names, so code
// that uses them gets a fix-it. Uncommenting any of these must give "renamed to ..." errors:
//   let internetProtocol: LocksmithInternetProtocol = .HTTPS
//   let accessible: LocksmithAccessibleOption = .AfterFirstUnlock
//   catch LocksmithError.NotFound { }
//   try Locksmith.saveData(["some key": "some value"], forUserAccount: "myUserAccount")

/// Compiles only with Locksmith 4's spellings, as its README writes them.
func locksmithSpellings() throws {
    try Locksmith.saveData(data: ["some key": "some value"], forUserAccount: "myUserAccount")
    _ = Locksmith.loadDataForUserAccount(userAccount: "myUserAccount")
    let kinds: (LocksmithInternetProtocol, LocksmithAccessibleOption, LocksmithError) = (.https, .afterFirstUnlock, .notFound)
    _ = kinds
}
