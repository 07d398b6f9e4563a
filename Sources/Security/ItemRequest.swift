import Foundation
import KeychainCore
import LocalAuthentication

/// A SecItem dictionary, read and checked: the class, the attributes, the value, the match
/// limit and what to return. Anything malformed (an unknown key's value of the wrong type, a
/// class it cannot be, data with match-all) is a `Refusal` carrying the OSStatus.
struct ItemRequest {
    struct Refusal: Error {
        let status: OSStatus
        init(_ status: OSStatus) { self.status = status }
    }

    var itemClass: ItemClass?
    var attributes = Attributes()
    var value: Data?
    var limit: Query.Limit = .one
    var limitCount: Int?
    var returnData = false
    var returnAttributes = false
    var returnPersistentReference = false
    var returnReference = false
    /// Who proves presence for items under an access control (`kSecUseAuthenticationContext`).
    var authentication: AuthenticationContext?
    var prompt: String?
    /// `kSecUseAuthenticationUIFail` (or `kSecUseNoAuthenticationUI`): never ask for a proof.
    var noInteraction = false

    /// The context a read proves presence through: the one given, or one made for the prompt
    /// and the interaction rule.
    var readContext: AuthenticationContext? {
        if let authentication {
            // A context that may ask, under a query that says never to: one that never asks.
            guard noInteraction, !authentication.interactionNotAllowed else { return authentication }
            return AuthenticationContext(authenticator: authentication.authenticator, reason: authentication.localizedReason, interactionNotAllowed: true)
        }
        guard prompt != nil || noInteraction else { return nil }
        return AuthenticationContext(reason: prompt ?? "", interactionNotAllowed: noInteraction)
    }
    var synchronizableAny = false

    /// Reads `dictionary`. `purpose` says which keys may appear: a search takes match and
    /// return keys, an update's attributes take neither (nor a class).
    init(_ dictionary: CFDictionary, purpose: Purpose) throws(Refusal) {
        for (rawKey, rawValue) in dictionary {
            guard let key = Self.string(rawKey) else { throw Refusal(errSecParam) }
            try read(key, rawValue, purpose: purpose)
        }
        if purpose != .changes {
            guard itemClass != nil else { throw Refusal(errSecParam) }
        }
        if purpose == .search, returnData, limit == .all, !returnAttributes, !returnPersistentReference {
            // Bare data of several password items at once is refused (Apple: each may need its
            // own proof); with their attributes, as iOS's keychain gives them, it is returned.
            throw Refusal(errSecParam)
        }
        if returnReference, !returnData, !returnAttributes, !returnPersistentReference { throw Refusal(errSecUnimplemented) }
        if !synchronizableAny, purpose != .changes, attributes.synchronizable == nil { attributes.synchronizable = false }
    }

    enum Purpose { case add, search, changes }

    private mutating func read(_ key: String, _ value: Any, purpose: Purpose) throws(Refusal) {
        func text() throws(Refusal) -> String { guard let s = Self.string(value) else { throw Refusal(errSecParam) }; return s }
        func bool() throws(Refusal) -> Bool { guard let b = Self.bool(value) else { throw Refusal(errSecParam) }; return b }
        func number() throws(Refusal) -> Int { guard let n = Self.int(value) else { throw Refusal(errSecParam) }; return n }
        // Apple stores these as bytes and takes CFData too; UTF-8 bytes name the same item here.
        func textOrData() throws(Refusal) -> String {
            if let s = Self.string(value) { return s }
            if let data = Self.data(value), let s = String(validating: [UInt8](data), as: UTF8.self) { return s }
            throw Refusal(errSecParam)
        }
        func code() throws(Refusal) -> UInt32 {
            if let n = Self.int(value), let u = UInt32(exactly: n) { return u }
            throw Refusal(errSecParam)
        }
        switch key {
        case "class":
            guard purpose != .changes else { throw Refusal(errSecParam) }
            switch try text() {
            case "genp": itemClass = .genericPassword
            case "inet": itemClass = .internetPassword
            case "cert", "keys", "idnt": throw Refusal(errSecUnimplemented)
            default: throw Refusal(errSecParam)
            }
        case "svce": attributes.service = try textOrData()
        case "acct":
            attributes.account = try textOrData()
            // The form it was given in is kept for the item (Apple returns bytes as bytes), and
            // is no criterion of a search.
            let isData = Self.string(value) == nil
            switch purpose {
            case .add: attributes.accountIsData = isData ? true : nil
            case .changes: attributes.accountIsData = isData
            case .search: break
            }
        case "agrp": attributes.accessGroup = try text()
        case "sync":
            if Self.string(value) == "syna" {
                guard purpose != .add else { throw Refusal(errSecParam) }
                synchronizableAny = true
            } else {
                attributes.synchronizable = try bool()
            }
        case "pdmn":
            guard let accessibility = Accessibility(rawValue: try text()) else { throw Refusal(errSecParam) }
            attributes.accessibility = accessibility
        case "accc":
            guard let control = value as? SecAccessControl else { throw Refusal(errSecParam) }
            attributes.accessibility = control.accessibility
            attributes.accessControl = control.control
        case "labl": attributes.label = try text()
        case "icmt": attributes.comment = try text()
        case "desc": attributes.description = try text()
        case "gena": guard let data = Self.data(value) else { throw Refusal(errSecParam) }; attributes.generic = data
        case "crtr": attributes.creator = try code()
        case "type": attributes.type = try code()
        case "invi": attributes.isInvisible = try bool()
        case "nega": attributes.isNegative = try bool()
        case "srvr": attributes.server = try text()
        case "ptcl": attributes.protocol = InternetProtocol(rawValue: try text())
        case "atyp": attributes.authenticationType = AuthenticationType(rawValue: try text())
        case "port":
            let port = try number()
            guard (0...65_535).contains(port) else { throw Refusal(errSecParam) }
            attributes.port = port
        case "path": attributes.path = try text()
        case "sdmn": attributes.securityDomain = try text()
        case "cdat", "mdat": throw Refusal(errSecParam)
        case "v_Data":
            guard purpose != .search, let data = Self.data(value) else { throw Refusal(errSecParam) }
            self.value = data
        case "m_Limit":
            guard purpose == .search else { throw Refusal(errSecParam) }
            if let text = Self.string(value) {
                switch text {
                case "m_LimitOne": limit = .one
                case "m_LimitAll": limit = .all
                default: throw Refusal(errSecParam)
                }
            } else {
                let count = try number()
                guard count > 0 else { throw Refusal(errSecParam) }
                limit = count == 1 ? .one : .all
                limitCount = count == 1 ? nil : count
            }
        case "r_Data": guard purpose != .changes else { throw Refusal(errSecParam) }; returnData = try bool()
        case "r_Attributes": guard purpose != .changes else { throw Refusal(errSecParam) }; returnAttributes = try bool()
        case "r_PersistentRef": guard purpose != .changes else { throw Refusal(errSecParam) }; returnPersistentReference = try bool()
        case "v_PersistentRef":
            guard purpose == .search, let data = Self.data(value), let (named, identity) = PersistentReference.read(data) else { throw Refusal(errSecParam) }
            itemClass = named
            attributes = attributes.merging(identity)
        case "r_Ref":
            // Passwords have no object references here: asked for beside data or attributes
            // (as KeychainAccess does), it adds nothing; asked for alone, it is not supported.
            guard purpose != .changes else { throw Refusal(errSecParam) }
            returnReference = try bool()
        case "v_Ref":
            throw Refusal(errSecUnimplemented)
        case "u_AuthCtx":
            guard purpose != .changes, let context = value as? LAContext else { throw Refusal(errSecParam) }
            authentication = context.authenticationContext
        case "u_OpPrompt":
            guard purpose != .changes else { throw Refusal(errSecParam) }
            prompt = try text()
        case "u_AuthUI":
            guard purpose != .changes else { throw Refusal(errSecParam) }
            let mode = try text()
            guard ["u_AuthUIA", "u_AuthUIF", "u_AuthUIS"].contains(mode) else { throw Refusal(errSecParam) }
            noInteraction = mode != "u_AuthUIA"
        case "u_NoAuthUI":
            guard purpose != .changes else { throw Refusal(errSecParam) }
            noInteraction = try bool()
        case "nleg":
            guard purpose != .changes else { throw Refusal(errSecParam) }
        default:
            throw Refusal(errSecParam)
        }
    }

    // MARK: - Values as Apple's bridging gives them

    static func string(_ value: Any) -> String? {
        if let string = value as? String { return string }
        if let string = value as? NSString { return String(string) }
        return nil
    }

    static func bool(_ value: Any) -> Bool? {
        if let bool = value as? Bool { return bool }
        if let number = value as? NSNumber { return number.boolValue }
        return nil
    }

    static func int(_ value: Any) -> Int? {
        if value is Bool { return nil }
        if let int = value as? Int { return int }
        if let number = value as? NSNumber { return number.intValue }
        return nil
    }

    static func data(_ value: Any) -> Data? {
        if let data = value as? Data { return data }
        if let data = value as? NSData { return Data(referencing: data) }
        return nil
    }
}
