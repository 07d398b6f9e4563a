import Foundation

// The reliability suite's program. For now: the worker processes the tests kill.
//   keychain-reliability worker migrate VAULT COUNT
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    switch arguments.first {
    case "worker" where arguments.count == 4 && arguments[1] == "migrate":
        exit(try MigrationWorker.run(vaultPath: arguments[2], count: Int(arguments[3]) ?? 1000))
    default:
        FileHandle.standardError.write(Data("usage: keychain-reliability worker migrate VAULT COUNT\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("keychain-reliability: \(error)\n".utf8))
    exit(1)
}
