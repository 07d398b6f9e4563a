import Foundation

/// A 3-member etcd cluster of a test's own on loopback (scripts/etcd-cluster.sh), with its
/// data under a temporary directory: members are killed, frozen, restarted and compacted
/// for real. Stopped (exactly its processes) when released.
public final class EtcdCluster: @unchecked Sendable {
    public let directory: TemporaryDirectory
    public let endpoints: String
    public var dataDirectory: String { directory.path + "/cluster" }

    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../scripts/etcd-cluster.sh").standardized.path

    /// Why a cluster cannot be started here, or nil.
    public static let unavailableReason: String? = {
        for tool in ["etcd", "etcdctl"] where !FileManager.default.isExecutableFile(atPath: "/usr/bin/" + tool) {
            return "\(tool) is not installed (apt-get install etcd-server etcd-client)"
        }
        if !FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") { return "openssl is not installed (apt-get install openssl)" }
        if dlopen("libcurl.so.4", RTLD_NOW) == nil { return "libcurl.so.4 is not installed (apt-get install libcurl4)" }
        return nil
    }()

    /// The PEM files of a cluster started with `tls`: its private CA, and a client
    /// certificate and key it accepts.
    public var caFile: String { dataDirectory + "/tls/ca.crt" }
    public var certFile: String { dataDirectory + "/tls/client.crt" }
    public var keyFile: String { dataDirectory + "/tls/client.key" }

    /// Starts a cluster; with `tls`, one that speaks only TLS to clients, with certificates
    /// from a private CA made for it (openssl), and asks each client for a certificate.
    public init(tls: Bool = false) throws {
        directory = TemporaryDirectory()
        if tls { try Self.makeCertificates(in: directory.path + "/cluster/tls") }
        var started: CommandResult?
        for _ in 0..<6 {
            // Below the kernel's ephemeral ports (32768 up), where outgoing connections would collide.
            let port0 = 20_000 + Int.random(in: 0..<250) * 50
            started = try Self.script(["start", directory.path + "/cluster", String(port0)])
            if started?.status == 0 { break }
        }
        guard let started, started.status == 0 else { throw CocoaError(.executableLoad) }
        endpoints = started.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit { stop() }

    private static func makeCertificates(in folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        try openssl(["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=keychain-test-ca"], in: folder)
        for (name, extensions) in [("server", "subjectAltName=IP:127.0.0.1"), ("client", "extendedKeyUsage=clientAuth")] {
            try openssl(["req"] + ec + ["-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(name)"], in: folder)
            _ = FileManager.default.createFile(atPath: "\(folder)/\(name).ext", contents: Data(extensions.utf8))
            try openssl(
                ["x509", "-req", "-in", "\(name).csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "\(name).crt", "-days", "2", "-extfile", "\(name).ext"],
                in: folder)
        }
    }

    private static func openssl(_ arguments: [String], in folder: String) throws {
        let result = try Subprocess.run("/bin/sh", ["-c", "cd \"$0\" && exec openssl \"$@\"", folder] + arguments, environment: ["PATH": "/usr/bin:/bin"])
        guard result.status == 0 else { throw CocoaError(.executableLoad) }
    }

    public func stop() { _ = try? Self.script(["stop", dataDirectory]) }
    /// SIGKILLs member `n` (1...3).
    public func kill(_ n: Int) throws { try run(["kill", dataDirectory, String(n)]) }
    /// SIGSTOPs member `n`: to the others it is partitioned away.
    public func pause(_ n: Int) throws { try run(["pause", dataDirectory, String(n)]) }
    public func resume(_ n: Int) throws { try run(["resume", dataDirectory, String(n)]) }
    /// Starts member `n` again from its data.
    public func restart(_ n: Int) throws { try run(["restart", dataDirectory, String(n)]) }
    /// Compacts the history up to the current revision.
    public func compact() throws { try run(["compact", dataDirectory]) }

    /// Stops every member, deletes their data and starts an empty cluster on the same ports.
    public func wipe() throws {
        stop()
        let port0 = try String(contentsOfFile: dataDirectory + "/port0", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.removeItem(atPath: dataDirectory)
        try run(["start", dataDirectory, port0])
    }

    private func run(_ arguments: [String]) throws {
        let result = try Self.script(arguments)
        guard result.status == 0 else { throw CocoaError(.executableLoad) }
    }

    private static func script(_ arguments: [String]) throws -> CommandResult {
        try Subprocess.run("/bin/bash", [script] + arguments, environment: ["PATH": "/usr/bin:/bin"])
    }
}
