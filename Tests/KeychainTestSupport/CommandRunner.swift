import Foundation

/// Runs the `keychain` executable built beside the test bundle, as a separate process.
public struct CommandResult: Sendable {
    public let status: Int32
    public let stdout: Data
    public let stderr: String
    public var output: String { String(decoding: stdout, as: UTF8.self) }
}

public enum KeychainExecutable {
    /// The built `keychain` binary: in the same build directory as the running test bundle.
    public static var path: String {
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (me as NSString).deletingLastPathComponent + "/keychain"
    }

    /// The built `keychain-reliability` program (crash workers), beside `keychain`.
    public static var reliabilityPath: String { path + "-reliability" }

    /// Runs `keychain arguments...` with `input` on standard input and `environment` added to a
    /// minimal environment (HOME and XDG_DATA_HOME point at `home` so no test touches real data).
    public static func run(_ arguments: [String], input: Data = Data(), environment: [String: String] = [:], home: String) throws -> CommandResult {
        // Tests leave nothing in the user's kernel keyring unless they test that cache.
        var env = ["PATH": "/usr/bin:/bin", "HOME": home, "XDG_DATA_HOME": home + "/data", "KEYCHAIN_KERNEL_KEYRING": "off"]
        env.merge(environment) { $1 }
        return try Subprocess.run(path, arguments, environment: env, input: input)
    }
}

/// The `keychain` command as a suite runs it: in a private home (``KeychainExecutable/run(_:input:environment:home:)``),
/// on one vault when it names one (`--vault` after the command's name), with variables every
/// run shares; a run's own variables win over those.
public struct KeychainCommandLine: Sendable {
    public let home: String
    public let vault: String?
    public let environment: [String: String]

    public init(home: String, vault: String? = nil, environment: [String: String] = [:]) {
        self.home = home
        self.vault = vault
        self.environment = environment
    }

    /// Runs `keychain arguments...` with `input` on standard input.
    public func callAsFunction(_ arguments: [String], input: String = "", environment: [String: String] = [:]) throws -> CommandResult {
        try callAsFunction(arguments, input: Data(input.utf8), environment: environment)
    }

    /// Runs `keychain arguments...` with the bytes of `input` on standard input.
    public func callAsFunction(_ arguments: [String], input: Data, environment: [String: String] = [:]) throws -> CommandResult {
        var full = arguments
        if let vault, !arguments.isEmpty { full = [arguments[0], "--vault", vault] + arguments.dropFirst() }
        return try KeychainExecutable.run(full, input: input, environment: self.environment.merging(environment) { $1 }, home: home)
    }

    /// The same command line with `environment` added to the variables every run shares.
    public func adding(environment: [String: String]) -> KeychainCommandLine {
        KeychainCommandLine(home: home, vault: vault, environment: self.environment.merging(environment) { $1 })
    }
}
