import Foundation
import KeychainSystem
import KeychainTestSupport
import Testing

@testable import KeychainCore

/// A creation killed between linking the key file and linking the vault: the next write
/// finishes it, a read finds no vault yet, and nothing else is ever taken for that vault.
@Suite("An interrupted vault creation")
struct InterruptedCreationTests {
    let directory = TemporaryDirectory()

    /// What a creator killed between its two links leaves: the key file in place, the finished
    /// vault under its temporary name.
    func interruptedCreation() throws -> VaultLocation {
        let location = VaultLocation(path: directory.vaultPath())
        let master = SecretBytes.random(count: 32)
        let keyFile = SecretBytes.random(count: 32)
        var header = VaultHeader(vaultID: Random.bytes(VaultHeader.vaultIDSize), protection: .keyFile)
        header.wrappedMasterKey = try AESGCM.seal(master, key: keyFile, associatedData: RecordCoding.masterKeyAssociatedData(header))
        let temporary = VaultFile.temporaryName(for: location.path)
        try FileSystem.createPrivateFile(temporary)
        try VaultState.initializeFile(temporary, header: header, master: master)
        #expect(try VaultFile.createExclusively(keyFile, at: location.keyFilePath))
        return location
    }

    @Test("a read finds no vault yet and creates nothing; the next write finishes the creation with the key file left")
    func finishedByTheNextWrite() throws {
        let location = try interruptedCreation()
        let configuration = directory.vaultConfiguration()
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(throws: StoreError.itemNotFound) { try Vault(configuration).copyMatching(Query(attributes: Attributes(account: "a"))) }
        #expect(!FileManager.default.fileExists(atPath: location.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == before, "a read created or removed a file")
        let keyBefore = try Data(contentsOf: URL(fileURLWithPath: location.keyFilePath))
        try Vault(configuration).add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("v")))
        #expect(try Vault(configuration).copyMatching(Query(attributes: Attributes(account: "a"), returnData: true)).first?.value == secret("v"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: location.keyFilePath)) == keyBefore)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".new-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test("a temporary vault that does not open with the key file is never taken: the key file stays orphaned")
    func foreignTemporaryRefused() throws {
        let location = try interruptedCreation()
        let temporary = try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.contains(".new-") }!
        // Another key file in place of the one the temporary vault was made for.
        try FileManager.default.removeItem(atPath: location.keyFilePath)
        #expect(try VaultFile.createExclusively(SecretBytes.random(count: 32), at: location.keyFilePath))
        #expect {
            try Vault(directory.vaultConfiguration()).add(Item(.genericPassword, attributes: Attributes(service: "s", account: "a"), value: secret("v")))
        } throws: { error in
            if case .orphanedKeyFile = error as? StoreError { true } else { false }
        }
        #expect(FileManager.default.fileExists(atPath: directory.path + "/" + temporary))
    }
}
