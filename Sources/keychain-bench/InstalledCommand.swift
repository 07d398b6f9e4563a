import Foundation

/// The command as `scripts/install.sh` builds it: release, the Swift runtime and Foundation
/// linked in (`--static-swift-stdlib`), into its own build directory.
enum InstalledCommand {
    static let packageDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized.path

    static func build() -> Result<String, BenchError> {
        guard let swift = Peers.which("swift") else { return .failure(BenchError("no swift on PATH to build the static command")) }
        let scratch = "\(packageDirectory)/.build/bench-static"
        let arguments = ["build", "-c", "release", "--static-swift-stdlib", "--product", "keychain", "--package-path", packageDirectory, "--scratch-path", scratch]
        do {
            try Peers.run(swift, arguments)
        } catch {
            return .failure(BenchError("swift \(arguments.joined(separator: " ")) failed: \(error)"))
        }
        let binary = "\(scratch)/release/keychain"
        return FileManager.default.isExecutableFile(atPath: binary) ? .success(binary) : .failure(BenchError("the static build made no \(binary)"))
    }
}
