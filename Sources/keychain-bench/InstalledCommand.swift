import Foundation

/// The command as `scripts/install.sh` builds it, by the same script (`scripts/build-static.sh`:
/// release, the Swift and C++ runtimes linked in), into its own build directory.
enum InstalledCommand {
    static let packageDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized.path

    static func build() -> Result<String, BenchError> {
        let script = "\(packageDirectory)/scripts/build-static.sh"
        let arguments = ["--scratch-path", "\(packageDirectory)/.build/bench-static"]
        let binary: String
        do {
            binary = String(decoding: try Peers.run(script, arguments), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } catch {
            return .failure(BenchError("\(script) \(arguments.joined(separator: " ")) failed: \(error)"))
        }
        return FileManager.default.isExecutableFile(atPath: binary) ? .success(binary) : .failure(BenchError("the static build made no \(binary)"))
    }
}
