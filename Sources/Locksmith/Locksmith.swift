import Foundation

/// The service of the static API when none is given: the main bundle's identifier where
/// there is one; a Linux executable has none, so its name (`ProcessInfo.processName`), which
/// keeps two programs from sharing items by accident.
public let LocksmithDefaultService: String = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName

/// Locksmith's static API: one `[String: Any]` dictionary per user account and service, kept
/// as a generic password in the default store (the vault unless the program chose otherwise).
public struct Locksmith {
    /// The dictionary saved for the account, or nil if there is none or it cannot be read.
    public static func loadDataForUserAccount(userAccount: String, inService service: String = LocksmithDefaultService) -> [String: Any]? {
        (AccountData(service: service, account: userAccount, data: [:]).readFromSecureStore() as GenericPasswordSecureStorableResultType?)?.data
    }

    /// Saves a new dictionary. - Throws: ``LocksmithError/duplicate`` if one exists
    /// (use ``updateData(data:forUserAccount:inService:)``), and every other failure.
    public static func saveData(data: [String: Any], forUserAccount userAccount: String, inService service: String = LocksmithDefaultService) throws {
        try AccountData(service: service, account: userAccount, data: data).createInSecureStore()
    }

    /// Deletes the dictionary. - Throws: ``LocksmithError/notFound`` if there is none, and every other failure.
    public static func deleteDataForUserAccount(userAccount: String, inService service: String = LocksmithDefaultService) throws {
        try AccountData(service: service, account: userAccount, data: [:]).deleteFromSecureStore()
    }

    /// Replaces the dictionary, or saves it if there is none. - Throws: every failure.
    public static func updateData(data: [String: Any], forUserAccount userAccount: String, inService service: String = LocksmithDefaultService) throws {
        try AccountData(service: service, account: userAccount, data: data).updateInSecureStore()
    }
}

/// The static API's item.
private struct AccountData: GenericPasswordSecureStorable, CreateableSecureStorable, ReadableSecureStorable, DeleteableSecureStorable {
    let service: String
    let account: String
    let data: [String: Any]
}
