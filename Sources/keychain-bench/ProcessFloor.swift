import Foundation

/// The whole-process floor for `keychain get`: `Benchmarks/process_floor.c` (open the vault's
/// SQLite file, one point select, one AES-256-GCM open, print), compiled here by the system's C
/// compiler against the same libsqlite3 and libcrypto the command loads.
enum ProcessFloor {
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Benchmarks/process_floor.c").standardized.path

    /// The compiled floor, or why there is none.
    static func build(into directory: String) -> Result<String, BenchError> {
        guard let compiler = Peers.which("cc") ?? Peers.which("gcc") ?? Peers.which("clang") else {
            return .failure(BenchError("no C compiler (apt-get install gcc)"))
        }
        let binary = "\(directory)/process_floor"
        do {
            try Peers.run(compiler, ["-O2", source, "-o", binary, "-lsqlite3", "-lcrypto"])
        } catch {
            return .failure(BenchError("\(compiler) could not build \(source): \(error) (needs libsqlite3-dev and libssl-dev)"))
        }
        return FileManager.default.isExecutableFile(atPath: binary) ? .success(binary) : .failure(BenchError("\(compiler) made no \(binary)"))
    }
}

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
