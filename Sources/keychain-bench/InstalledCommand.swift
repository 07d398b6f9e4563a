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

    /// A copy of `binary` written now, as the floor it is timed against is compiled now. How a
    /// file came into the page cache shows in every process started from it: here a copy of
    /// one binary written an hour before ran slower than a fresh copy of it (1.68x the floor
    /// against 1.61x, interleaved); with the page cache dropped first, the two ran alike.
    static func freshCopy(of binary: String, into directory: String) -> Result<String, BenchError> {
        let copy = "\(directory)/keychain-static"
        do {
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: binary, toPath: copy)
        } catch {
            return .failure(BenchError("could not copy \(binary) into \(directory): \(error)"))
        }
        return .success(copy)
    }

    /// Builds the command beside this benchmark (`swift build -c release --product keychain`
    /// into the build directory the benchmark runs from), where `swift run -c release
    /// keychain-bench` builds only the benchmark.
    static func buildBeside(_ binary: String) -> Result<Void, BenchError> {
        guard let swift = Peers.which("swift") else { return .failure(BenchError("no swift on PATH to build \(binary)")) }
        // <scratch>/<triple>/release/keychain: the scratch directory is three levels up.
        let scratch = URL(fileURLWithPath: binary).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
        let arguments = ["build", "-c", "release", "--product", "keychain", "--package-path", packageDirectory, "--scratch-path", scratch]
        do {
            try Peers.run(swift, arguments)
        } catch {
            return .failure(BenchError("swift \(arguments.joined(separator: " ")) failed: \(error)"))
        }
        return FileManager.default.isExecutableFile(atPath: binary) ? .success(()) : .failure(BenchError("the build made no \(binary)"))
    }
}
