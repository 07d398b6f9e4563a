import Foundation
import KeychainCore

/// Results shaped as SecItemCopyMatching returns them: data alone, an attribute dictionary
/// (with the data under `v_Data` when asked for), or an array of dictionaries for match-all.
enum ItemResult {
    static func shape(_ items: [Item], request: ItemRequest) -> CFTypeRef? {
        guard request.returnData || request.returnAttributes || request.returnPersistentReference else { return nil }
        func one(_ item: Item) -> AnyObject {
            let asked = [request.returnData, request.returnAttributes, request.returnPersistentReference].filter { $0 }.count
            if asked == 1, request.returnData { return (item.value.map { data($0) } ?? Data()) as NSData }
            if asked == 1, request.returnPersistentReference { return PersistentReference.make(item) as NSData }
            var dictionary = request.returnAttributes ? attributes(of: item) : [:]
            if request.returnData { dictionary["v_Data"] = (item.value.map { data($0) } ?? Data()) as NSData }
            if request.returnPersistentReference { dictionary["v_PersistentRef"] = PersistentReference.make(item) as NSData }
            return dictionary as NSDictionary
        }
        if request.limit == .one, let first = items.first { return one(first) }
        return items.map(one) as NSArray
    }

    static func data(_ secret: SecretBytes) -> Data { secret.withUnsafeBytes { Data($0) } }

    /// Every attribute the item has, under Apple's keys, with Apple's value types.
    static func attributes(of item: Item) -> [String: Any] {
        let a = item.attributes
        var out: [String: Any] = ["class": item.itemClass == .genericPassword ? "genp" : "inet"]
        func put(_ key: String, _ value: Any?) { if let value { out[key] = value } }
        put("svce", a.service)
        let account = a.account ?? ""
        put("acct", a.accountIsData == true ? Data(account.utf8) as NSData : account)
        put("agrp", a.accessGroup)
        out["sync"] = NSNumber(value: a.synchronizable ?? false)
        put("pdmn", a.accessibility?.rawValue)
        put("labl", a.label)
        put("icmt", a.comment)
        put("desc", a.description)
        put("gena", a.generic)
        put("crtr", a.creator.map { NSNumber(value: $0) })
        put("type", a.type.map { NSNumber(value: $0) })
        put("invi", a.isInvisible.map { NSNumber(value: $0) })
        put("nega", a.isNegative.map { NSNumber(value: $0) })
        put("srvr", a.server)
        put("ptcl", a.protocol?.rawValue)
        put("atyp", a.authenticationType?.rawValue)
        put("port", a.port.map { NSNumber(value: $0) })
        put("path", a.path)
        put("sdmn", a.securityDomain)
        put("cdat", a.creationDate)
        put("mdat", a.modificationDate)
        return out
    }
}
