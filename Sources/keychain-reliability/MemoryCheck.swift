import Foundation
import KeychainCore
import KeychainTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Secrets in memory: after a worker stores and reads a unique secret through Valet, wipes its
/// own copies and releases everything, its core dump (gcore) is searched for the secret and for
/// the vault's key file. Whatever is found is the library's doing. Then the worker reads the
/// secret back and holds it, as KeychainCore hands it out (a SecretBytes): it must be in the
/// process's memory, and not in its core dump (the secure heap is `MADV_DONTDUMP`). (That the
/// command keeps secrets out of argv, environ and error text is proven by its tests:
/// CommandTests.secretsStayOut.)
enum MemoryCheck {
    static func run(_ env: CheckEnvironment) -> CheckResult {
        var result = CheckResult("secrets in memory and around the process")
        let directory = env.directory("memory")
        let path = directory + "/memory.keychain"
        let secretValue = "MEMORY-SECRET-\(UUID().uuidString)"
        let secretPath = directory + "/secret"
        CorruptionCheck.write(Array(secretValue.utf8), to: secretPath, mode: 0o600)
        let launched: (pid: pid_t, stdout: Int32)
        do {
            launched = try Subprocess.launchReadingOutput(env.program, ["worker", "memory", path, secretPath], environment: env.workerEnvironment)
        } catch {
            result.fail("cannot start the worker: \(error)")
            return result
        }
        defer { kill(launched.pid, SIGKILL); Subprocess.wait(for: launched.pid); close(launched.stdout) }
        guard Subprocess.readOutput(launched.stdout, until: "released") else {
            result.fail("the worker did not finish its writes")
            return result
        }
        let keyFile = [UInt8](FileManager.default.contents(atPath: path + ".key") ?? Data())
        let image: [UInt8]
        let source: String
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/gcore") {
            let core = directory + "/core"
            let dumped = try? Subprocess.run("/usr/bin/gcore", ["-o", core, "\(launched.pid)"], environment: env.workerEnvironment)
            image = [UInt8](FileManager.default.contents(atPath: core + ".\(launched.pid)") ?? Data())
            source = dumped?.status == 0 && !image.isEmpty ? "gcore core dump (\(image.count / 1_048_576) MiB)" : "gcore failed"
            unlink(core + ".\(launched.pid)")
        } else {
            image = readWritableMappings(launched.pid)
            source = "the process's writable mappings via /proc/<pid>/mem (gcore not installed)"
        }
        guard !image.isEmpty else {
            result.fail("no memory image: \(source)")
            return result
        }
        let secretCount = occurrences(of: Array(secretValue.utf8), in: image)
        let keyCount = keyFile.count == 32 ? occurrences(of: keyFile, in: image) : -1
        result.figure("memory image", source)
        result.figure("copies of the stored secret after release", secretCount)
        result.figure("copies of the vault's key file", keyCount)
        if secretCount != 0 { result.fail("\(secretCount) copies of the secret outlive the library's use of it") }
        if keyCount != 0 { result.fail("the key file's bytes are still in memory after release (\(keyCount) copies)") }

        CorruptionCheck.write([1], to: path + ".hold", mode: 0o600)
        guard Subprocess.readOutput(launched.stdout, until: "holding") else {
            result.fail("the worker did not read the secret back")
            return result
        }
        let live = occurrences(of: Array(secretValue.utf8), in: readWritableMappings(launched.pid))
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gcore") else {
            result.figure("a held secret in a core dump", "not measured (gcore not installed)")
            return result
        }
        let core = directory + "/held"
        _ = try? Subprocess.run("/usr/bin/gcore", ["-o", core, "\(launched.pid)"], environment: env.workerEnvironment)
        let dump = [UInt8](FileManager.default.contents(atPath: core + ".\(launched.pid)") ?? Data())
        unlink(core + ".\(launched.pid)")
        let dumped = occurrences(of: Array(secretValue.utf8), in: dump)
        result.figure("a held secret: copies in memory / in its core dump", "\(live) / \(dumped) (\(dump.count / 1_048_576) MiB dump)")
        if live == 0 { result.fail("the held secret is not in the worker's memory: the check proves nothing") }
        if dump.isEmpty { result.fail("gcore gave no core dump of the holding worker") }
        if dumped != 0 { result.fail("\(dumped) copies of a held secret reached the core dump") }
        return result
    }

    static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
        guard !needle.isEmpty, haystack.count >= needle.count else { return 0 }
        var count = 0
        let first = needle[0]
        var index = 0
        let last = haystack.count - needle.count
        while index <= last {
            if haystack[index] == first && haystack[index..<(index + needle.count)].elementsEqual(needle) { count += 1 }
            index += 1
        }
        return count
    }

    /// Every readable, writable mapping of `pid` (heap, stacks, anonymous memory): what a core dump holds of its data.
    static func readWritableMappings(_ pid: pid_t) -> [UInt8] {
        // Read to the end: /proc files report a size of 0, and a sized read stops early.
        guard let handle = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { return [] }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        let fd = open("/proc/\(pid)/mem", O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var image: [UInt8] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0], bounds[1] - bounds[0] < 1 << 30 else { continue }
            var chunk = [UInt8](repeating: 0, count: Int(bounds[1] - bounds[0]))
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(bounds[0])) }
            if n > 0 { image.append(contentsOf: chunk.prefix(n)) }
        }
        return image
    }
}
