// The Keychain's attribute names and values, as the strings Apple's Security framework uses,
// so that migration queries written for Apple (`[kSecClass as String: kSecClassGenericPassword]`)
// compile and mean the same here. On Apple these are CFStrings; `as String` works on both.

public let kSecClass = "class"
public let kSecClassGenericPassword = "genp"
public let kSecClassInternetPassword = "inet"

public let kSecAttrService = "svce"
public let kSecAttrAccount = "acct"
public let kSecAttrAccessGroup = "agrp"
public let kSecAttrLabel = "labl"
public let kSecAttrComment = "icmt"
public let kSecAttrDescription = "desc"
public let kSecAttrGeneric = "gena"
public let kSecAttrServer = "srvr"
public let kSecAttrProtocol = "ptcl"
public let kSecAttrPort = "port"
public let kSecAttrPath = "path"
public let kSecAttrAccessControl = "accc"

public let kSecAttrAccessible = "pdmn"
public let kSecAttrAccessibleWhenUnlocked = "ak"
public let kSecAttrAccessibleAfterFirstUnlock = "ck"
public let kSecAttrAccessibleAlways = "dk"
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly = "akpu"
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly = "aku"
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly = "cku"
public let kSecAttrAccessibleAlwaysThisDeviceOnly = "dku"

public let kSecAttrSynchronizable = "sync"
public let kSecAttrSynchronizableAny = "syna"

public let kSecMatchLimit = "m_Limit"
public let kSecMatchLimitOne = "m_LimitOne"
public let kSecMatchLimitAll = "m_LimitAll"

public let kSecReturnData = "r_Data"
public let kSecReturnAttributes = "r_Attributes"
public let kSecReturnRef = "r_Ref"
public let kSecReturnPersistentRef = "r_PersistentRef"

public let kSecValueData = "v_Data"
public let kSecUseDataProtectionKeychain = "nleg"

// CoreFoundation's booleans, as query values (`[kSecAttrSynchronizable as String: kCFBooleanTrue]`).
// On Apple they are `CFBoolean!`; here the Bool they stand for.
public let kCFBooleanTrue: Bool! = true
public let kCFBooleanFalse: Bool! = false
