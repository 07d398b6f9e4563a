import Foundation

/// One check's outcome: whether it held, its figures, and what it found wrong.
struct CheckResult {
    let name: String
    var passed = true
    var skipped: String?
    var figures: [(String, String)] = []
    var failures: [String] = []
    var seconds = 0.0

    init(_ name: String) { self.name = name }

    mutating func figure(_ label: String, _ value: CustomStringConvertible) { figures.append((label, value.description)) }

    mutating func fail(_ message: String) {
        passed = false
        if failures.count < 20 { failures.append(message) }
    }

    mutating func skip(_ reason: String) { skipped = reason }
}

enum Report {
    static func print(_ result: CheckResult) {
        let status = result.skipped != nil ? "SKIPPED" : (result.passed ? "ok" : "FAILED")
        Swift.print("== \(result.name): \(status) (\(String(format: "%.1f", result.seconds)) s)")
        if let reason = result.skipped { Swift.print("   skipped: \(reason)") }
        for (label, value) in result.figures { Swift.print("   \(label): \(value)") }
        for failure in result.failures { Swift.print("   FAILURE: \(failure)") }
    }

    static func json(_ results: [CheckResult], mode: String) -> Data {
        let checks: [[String: Any]] = results.map { r in
            [
                "name": r.name, "passed": r.passed, "skipped": r.skipped ?? NSNull(), "seconds": (r.seconds * 10).rounded() / 10,
                "figures": Dictionary(r.figures, uniquingKeysWith: { $1 }), "failures": r.failures,
            ]
        }
        let document: [String: Any] = ["mode": mode, "date": ISO8601DateFormatter().string(from: Date()), "checks": checks]
        return (try? JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])) ?? Data()
    }
}
