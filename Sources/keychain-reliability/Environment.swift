import Foundation
import KeychainTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Where the checks run: a scratch directory, this program's path (to start workers), and
/// the minimal environment workers get.
struct CheckEnvironment {
    let scratch: String
    let program: String
    let seed: UInt64

    var workerEnvironment: [String: String] { ["PATH": "/usr/bin:/bin", "HOME": scratch] }

    func directory(_ name: String) -> String {
        let path = scratch + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        mkdir(path, 0o700)
        return path
    }

    /// Runs this program as a worker to completion.
    func run(_ arguments: [String]) throws -> CommandResult {
        try Subprocess.run(program, arguments, environment: workerEnvironment)
    }

    /// Runs `arguments` of this program as another user (root only), through setpriv.
    func runAs(user: String, _ arguments: [String]) throws -> CommandResult {
        try Subprocess.run(
            "/usr/bin/setpriv", ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "--", program] + arguments,
            environment: workerEnvironment)
    }
}

extension ContinuousClock.Instant {
    var secondsSince: Double {
        let d = ContinuousClock.now - self
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
