import Foundation

/// The Security module's parser of caller dictionaries, for the fuzz target (`Fuzz/`). Not API.
@_spi(Fuzzing) public enum SecurityFuzzEntryPoints {
    private static let keys = [
        "class", "svce", "acct", "agrp", "sync", "pdmn", "accc", "labl", "icmt", "desc", "gena", "crtr", "type", "invi", "nega", "srvr", "ptcl",
        "atyp", "port", "path", "sdmn", "cdat", "mdat", "v_Data", "v_PersistentRef", "v_Ref", "m_Limit", "r_Data", "r_Attributes", "r_Ref",
        "r_PersistentRef", "u_OpPrompt", "u_AuthUI", "u_AuthCtx", "u_NoAuthUI", "nleg",
    ]
    private static let words = ["genp", "inet", "cert", "syna", "ak", "akpu", "m_LimitOne", "m_LimitAll", "u_AuthUIF", "htps", "kcpr2", ""]

    /// Builds a dictionary from `bytes` (keys, and values of every type a caller may pass) and
    /// reads it as an add, a search and an update's changes. Whether any reading accepted it.
    public static func query(_ bytes: [UInt8]) -> Bool {
        var dictionary: [String: Any] = [:]
        var index = 0
        func next() -> UInt8? {
            guard index < bytes.count else { return nil }
            defer { index += 1 }
            return bytes[index]
        }
        while let keyByte = next(), let kind = next() {
            let key = keyByte < 0xF0 ? keys[Int(keyByte) % keys.count] : String(decoding: bytes[index..<min(bytes.count, index + 4)], as: UTF8.self)
            let length = Int(next() ?? 0) % 16
            let chunk = Array(bytes[min(index, bytes.count)..<min(bytes.count, index + length)])
            index += length
            switch kind % 7 {
            case 0: dictionary[key] = words[Int(length) % words.count]
            case 1: dictionary[key] = String(decoding: chunk, as: UTF8.self)
            case 2: dictionary[key] = Data(chunk)
            case 3: dictionary[key] = chunk.first.map { Int($0) - 64 } ?? 0
            case 4: dictionary[key] = (chunk.first ?? 0) & 1 == 1
            case 5: dictionary[key] = NSNumber(value: chunk.first ?? 0)
            default: dictionary[key] = Date(timeIntervalSince1970: Double(chunk.first ?? 0))
            }
        }
        var accepted = false
        for purpose in [ItemRequest.Purpose.add, .search, .changes] {
            if (try? ItemRequest(dictionary as CFDictionary, purpose: purpose)) != nil { accepted = true }
        }
        if let reference = dictionary["v_PersistentRef"] as? Data { _ = PersistentReference.read(reference) }
        return accepted
    }
}
