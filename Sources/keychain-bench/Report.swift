import Foundation

/// The table, the JSON and the SVG chart of one benchmark run.
struct Report: Codable {
    var machine: [String: String]
    var measurements: [Measurement] = []
    var skipped: [String: String] = [:]
    var targets: [Target] = []

    struct Target: Codable {
        let goal: String
        let measured: String
        let met: Bool
    }

    func table() -> String {
        var lines: [String] = []
        var group = ""
        func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
        func lpad(_ s: String, _ n: Int) -> String { s.count >= n ? s : String(repeating: " ", count: n - s.count) + s }
        lines.append(pad("operation", 46) + lpad("median/s", 12) + lpad("µs/op", 10) + lpad("min/s", 12) + lpad("max/s", 12) + "  ratio")
        for m in measurements {
            if m.group != group {
                group = m.group
                lines.append("")
                lines.append("[\(group)]")
            }
            var line =
                pad("  " + m.name, 46) + lpad(Self.format(m.median), 12) + lpad(String(format: "%.1f", m.microseconds), 10)
                + lpad(Self.format(m.minimum), 12) + lpad(Self.format(m.maximum), 12)
            if let ratio = m.ratio, let base = m.comparedWith { line += String(format: "  %.2fx %@", ratio, base) }
            if let note = m.note { line += "  (\(note))" }
            lines.append(line)
        }
        if !skipped.isEmpty {
            lines.append("")
            lines.append("skipped:")
            for (name, reason) in skipped.sorted(by: { $0.key < $1.key }) { lines.append("  \(name): \(reason)") }
        }
        lines.append("")
        lines.append("targets:")
        for target in targets { lines.append("  [\(target.met ? "met " : "MISS")] \(target.goal): \(target.measured)") }
        return lines.joined(separator: "\n")
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String(format: "%.2f", value)
    }

    /// Horizontal bars on a log scale: set+get pairs per second, ours and the peers'.
    func chart() -> String {
        let bars = measurements.filter { $0.group.hasPrefix("peers") || $0.group.hasPrefix("ours") }.sorted { $0.median > $1.median }
        let width = 900.0, rowHeight = 30.0, left = 330.0, top = 50.0
        let height = top + Double(bars.count) * rowHeight + 40
        let maxLog = log10(max(bars.map(\.median).max() ?? 10, 10)).rounded(.up)
        func x(_ value: Double) -> Double { left + (width - left - 30) * max(0, log10(max(value, 1))) / maxLog }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="13">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="22" font-size="16" font-weight="bold">Secret set+get pairs per second (log scale; higher is better)</text>

            """
        for decade in 0...Int(maxLog) {
            let position = x(pow(10, Double(decade)))
            svg += "<line x1=\"\(position)\" y1=\"\(top - 8)\" x2=\"\(position)\" y2=\"\(height - 30)\" stroke=\"#ddd\"/>"
            svg += "<text x=\"\(position)\" y=\"\(height - 12)\" text-anchor=\"middle\" fill=\"#555\">1e\(decade)</text>\n"
        }
        for (index, bar) in bars.enumerated() {
            let y = top + Double(index) * rowHeight
            let ours = bar.group.hasPrefix("ours")
            let label = bar.name.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            svg += "<text x=\"\(left - 8)\" y=\"\(y + 17)\" text-anchor=\"end\">\(label)</text>"
            svg += "<rect x=\"\(left)\" y=\"\(y + 4)\" width=\"\(max(1, x(bar.median) - left))\" height=\"\(rowHeight - 10)\" fill=\"\(ours ? "#2a7ab0" : "#b0b0b0")\"/>"
            svg += "<text x=\"\(x(bar.median) + 6)\" y=\"\(y + 17)\" fill=\"#333\">\(Self.format(bar.median))</text>\n"
        }
        return svg + "</svg>\n"
    }
}
