import COpenSSL
import CSQLite
import Foundation
import KeychainTestSupport

/// What the vault cannot beat, measured on the same machine: raw SQLite on a table of the
/// vault's shape, and raw AES-256-GCM on the same value size. These are the denominators of the
/// ratios the benchmark prints.
struct SQLiteFloor {
    let db: OpaquePointer
    let keys: [[UInt8]]

    init(path: String, items: Int) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let handle else {
            throw BenchError("cannot open \(path)")
        }
        db = handle
        for pragma in [
            "PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL",
            "CREATE TABLE items(id INTEGER PRIMARY KEY, class INTEGER, protection INTEGER, identity BLOB UNIQUE, scope BLOB, attributes BLOB, value BLOB)",
            "CREATE INDEX items_scope ON items(scope)",
        ] {
            sqlite3_exec(db, pragma, nil, nil, nil)
        }
        var generator = SeededRandom(seed: 42)
        keys = (0..<items).map { _ in (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        sqlite3_exec(db, "BEGIN", nil, nil, nil)
        let insert = try prepare("INSERT INTO items(class, protection, identity, scope, attributes, value) VALUES(1, 1, ?, ?, ?, ?)")
        let scope = [UInt8](repeating: 1, count: 32), attributes = [UInt8](repeating: 2, count: 200), value = [UInt8](repeating: 3, count: 60)
        for key in keys {
            bind(insert, [key, scope, attributes, value])
            sqlite3_step(insert)
            sqlite3_reset(insert)
        }
        sqlite3_finalize(insert)
        sqlite3_exec(db, "COMMIT", nil, nil, nil)
    }

    func close() { sqlite3_close_v2(db) }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { throw BenchError("prepare \(sql)") }
        return statement
    }

    func bind(_ statement: OpaquePointer, _ blobs: [[UInt8]]) {
        for (index, blob) in blobs.enumerated() {
            blob.withUnsafeBytes { _ = sqlite3_bind_blob(statement, Int32(index + 1), $0.baseAddress, Int32($0.count), csqlite_transient()) }
        }
    }

    /// Point selects by the identity digest, as the vault's get does.
    func pointSelects(_ count: Int, seed: UInt64) throws {
        let select = try prepare("SELECT id, class, protection, identity, attributes, value FROM items WHERE identity = ?")
        defer { sqlite3_finalize(select) }
        var generator = SeededRandom(seed: seed)
        for _ in 0..<count {
            bind(select, [keys[Int.random(in: 0..<keys.count, using: &generator)]])
            guard sqlite3_step(select) == SQLITE_ROW else { throw BenchError("row missing") }
            _ = sqlite3_column_blob(select, 5)
            sqlite3_reset(select)
        }
    }

    /// Durable upserts, each its own transaction, as the vault's set does.
    func durableUpserts(_ count: Int, seed: UInt64) throws {
        let upsert = try prepare(
            "INSERT INTO items(class, protection, identity, scope, attributes, value) VALUES(1, 1, ?, ?, ?, ?) ON CONFLICT(identity) DO UPDATE SET value = excluded.value, attributes = excluded.attributes"
        )
        defer { sqlite3_finalize(upsert) }
        var generator = SeededRandom(seed: seed)
        let scope = [UInt8](repeating: 1, count: 32), attributes = [UInt8](repeating: 2, count: 200)
        for _ in 0..<count {
            sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil)
            let value = (0..<60).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bind(upsert, [keys[Int.random(in: 0..<keys.count, using: &generator)], scope, attributes, value])
            guard sqlite3_step(upsert) == SQLITE_DONE else { throw BenchError("upsert failed") }
            sqlite3_reset(upsert)
            sqlite3_exec(db, "COMMIT", nil, nil, nil)
        }
    }
}

/// Raw AES-256-GCM through the same EVP calls the vault makes, one fresh context per call.
private enum RawAESGCM {
    static let key = [UInt8](repeating: 7, count: 32), nonce = [UInt8](repeating: 9, count: 12)

    /// The ciphertext and tag of `plaintext`.
    static func seal(_ plaintext: [UInt8]) -> (ciphertext: [UInt8], tag: [UInt8]) {
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16), tag = [UInt8](repeating: 0, count: 16)
        var length: Int32 = 0
        let context = EVP_CIPHER_CTX_new()
        EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce)
        EVP_EncryptUpdate(context, &ciphertext, &length, plaintext, Int32(plaintext.count))
        EVP_EncryptFinal_ex(context, &ciphertext[Int(length)], &length)
        EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &tag)
        EVP_CIPHER_CTX_free(context)
        return (ciphertext, tag)
    }

    static func open(_ sealed: (ciphertext: [UInt8], tag: [UInt8]), count: Int) {
        var out = [UInt8](repeating: 0, count: count + 16), tag = sealed.tag
        var length: Int32 = 0
        let context = EVP_CIPHER_CTX_new()
        EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce)
        EVP_DecryptUpdate(context, &out, &length, sealed.ciphertext, Int32(count))
        EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &tag)
        EVP_DecryptFinal_ex(context, &out[Int(length)], &length)
        EVP_CIPHER_CTX_free(context)
    }
}

/// Seal then open one value with AES-256-GCM, `count` times.
func aesGCMRoundTrips(_ count: Int, valueSize: Int) {
    let plaintext = [UInt8](repeating: 1, count: valueSize)
    for _ in 0..<count { RawAESGCM.open(RawAESGCM.seal(plaintext), count: valueSize) }
}

/// Open one sealed value with AES-256-GCM, `count` times: the crypto half of a read's floor.
func aesGCMOpens(_ count: Int, valueSize: Int) {
    let sealed = RawAESGCM.seal([UInt8](repeating: 1, count: valueSize))
    for _ in 0..<count { RawAESGCM.open(sealed, count: valueSize) }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
