import Foundation
import KeychainCore

/// Items as the keychain's attribute dictionaries, keyed by Apple's raw attribute names
/// (`acct`, `svce`, `srvr`, `pdmn`...): what request closures and result types see.
enum KeychainDictionary {
    static func make(_ itemClass: ItemClass, _ a: Attributes, valueData: Data? = nil) -> [String: Any] {
        var d: [String: Any] = ["class": itemClass.rawValue]
        d["acct"] = a.account
        d["svce"] = a.service
        d["agrp"] = a.accessGroup.flatMap { $0.isEmpty ? nil : $0 }
        d["pdmn"] = a.accessibility?.rawValue
        d["labl"] = a.label
        d["icmt"] = a.comment
        d["desc"] = a.description
        d["gena"] = a.generic
        d["crtr"] = a.creator.map { UInt($0) }
        d["type"] = a.type.map { UInt($0) }
        d["invi"] = a.isInvisible
        d["nega"] = a.isNegative
        d["srvr"] = a.server
        d["ptcl"] = a.protocol?.rawValue
        d["atyp"] = a.authenticationType?.rawValue
        d["port"] = a.port
        d["path"] = a.path
        d["sdmn"] = a.securityDomain
        d["cdat"] = a.creationDate
        d["mdat"] = a.modificationDate
        d["v_Data"] = valueData
        return d
    }
}
