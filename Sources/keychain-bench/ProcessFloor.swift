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
