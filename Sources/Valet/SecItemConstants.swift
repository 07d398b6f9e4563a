// The Keychain's attribute names and values, as the strings Apple's Security framework uses,
// so that migration queries written for Apple (`[kSecClass as String: kSecClassGenericPassword]`)
// compile and mean the same here. On Apple these are CFStrings; `as String` works on both.

/// Apple's `kSecClass`, with its raw value (`class`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecClass = "class"
/// Apple's `kSecClassGenericPassword`, with its raw value (`genp`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecClassGenericPassword = "genp"
/// Apple's `kSecClassInternetPassword`, with its raw value (`inet`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecClassInternetPassword = "inet"

/// Apple's `kSecAttrService`, with its raw value (`svce`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrService = "svce"
/// Apple's `kSecAttrAccount`, with its raw value (`acct`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccount = "acct"
/// Apple's `kSecAttrAccessGroup`, with its raw value (`agrp`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccessGroup = "agrp"
/// Apple's `kSecAttrLabel`, with its raw value (`labl`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrLabel = "labl"
/// Apple's `kSecAttrComment`, with its raw value (`icmt`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrComment = "icmt"
/// Apple's `kSecAttrDescription`, with its raw value (`desc`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrDescription = "desc"
/// Apple's `kSecAttrGeneric`, with its raw value (`gena`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrGeneric = "gena"
/// Apple's `kSecAttrServer`, with its raw value (`srvr`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrServer = "srvr"
/// Apple's `kSecAttrProtocol`, with its raw value (`ptcl`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrProtocol = "ptcl"
/// Apple's `kSecAttrPort`, with its raw value (`port`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrPort = "port"
/// Apple's `kSecAttrPath`, with its raw value (`path`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrPath = "path"
/// Apple's `kSecAttrAccessControl`, with its raw value (`accc`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccessControl = "accc"

/// Apple's `kSecAttrAccessible`, with its raw value (`pdmn`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccessible = "pdmn"
/// Apple's `kSecAttrAccessibleWhenUnlocked`, with its raw value (`ak`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccessibleWhenUnlocked = "ak"
/// Apple's `kSecAttrAccessibleAfterFirstUnlock`, with its raw value (`ck`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccessibleAfterFirstUnlock = "ck"
/// Apple's `kSecAttrAccessibleAlways`, with its raw value (`dk`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccessibleAlways = "dk"
/// Apple's `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly`, with its raw value (`akpu`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly = "akpu"
/// Apple's `kSecAttrAccessibleWhenUnlockedThisDeviceOnly`, with its raw value (`aku`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccessibleWhenUnlockedThisDeviceOnly = "aku"
/// Apple's `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`, with its raw value (`cku`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly = "cku"
/// Apple's `kSecAttrAccessibleAlwaysThisDeviceOnly`, with its raw value (`dku`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrAccessibleAlwaysThisDeviceOnly = "dku"

/// Apple's `kSecAttrSynchronizable`, with its raw value (`sync`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrSynchronizable = "sync"
/// Apple's `kSecAttrSynchronizableAny`, with its raw value (`syna`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecAttrSynchronizableAny = "syna"

/// Apple's `kSecMatchLimit`, with its raw value (`m_Limit`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecMatchLimit = "m_Limit"
/// Apple's `kSecMatchLimitOne`, with its raw value (`m_LimitOne`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecMatchLimitOne = "m_LimitOne"
/// Apple's `kSecMatchLimitAll`, with its raw value (`m_LimitAll`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecMatchLimitAll = "m_LimitAll"

/// Apple's `kSecReturnData`, with its raw value (`r_Data`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecReturnData = "r_Data"
/// Apple's `kSecReturnAttributes`, with its raw value (`r_Attributes`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecReturnAttributes = "r_Attributes"
/// Apple's `kSecReturnRef`, with its raw value (`r_Ref`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecReturnRef = "r_Ref"
/// Apple's `kSecReturnPersistentRef`, with its raw value (`r_PersistentRef`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecReturnPersistentRef = "r_PersistentRef"

/// Apple's `kSecValueData`, with its raw value (`v_Data`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecValueData = "v_Data"
/// Apple's `kSecUseDataProtectionKeychain`, with its raw value (`nleg`), so a query or an attribute dictionary reads as on Apple platforms.
public let kSecUseDataProtectionKeychain = "nleg"

// CoreFoundation's booleans, as query values (`[kSecAttrSynchronizable as String: kCFBooleanTrue]`).
// On Apple they are `CFBoolean!`; here the Bool they stand for.
/// `kCFBooleanTrue` as Swift code on Linux can use it in a query dictionary: `true`.
public let kCFBooleanTrue: Bool! = true
/// `kCFBooleanFalse` as Swift code on Linux can use it in a query dictionary: `false`.
public let kCFBooleanFalse: Bool! = false
