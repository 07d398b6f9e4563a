import Foundation

/// Repeated timings of one operation: per-run rates, summarised by median, min and max.
struct Measurement: Codable {
    let name: String
    let group: String
    /// Operations per second, one figure per run.
    let rates: [Double]
    var note: String? = nil
    /// The floor or baseline this figure is compared with, and the ratio of its cost to ours.
    var comparedWith: String? = nil
    var ratio: Double? = nil

    var median: Double { rates.sorted()[rates.count / 2] }
    var minimum: Double { rates.min() ?? 0 }
    var maximum: Double { rates.max() ?? 0 }
    /// Median time per operation, in microseconds.
    var microseconds: Double { 1_000_000 / median }
}

enum Clock {
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Runs `body` (which performs `operations` operations) `runs` times after one warm-up, and
    /// returns operations per second for each run.
    static func rates(runs: Int, operations: Int, warmUp: Bool = true, _ body: (Int) throws -> Void) rethrows -> [Double] {
        if warmUp { try body(-1) }
        var rates: [Double] = []
        for run in 0..<runs {
            let start = now()
            try body(run)
            let seconds = Double(now() - start) / 1e9
            rates.append(Double(operations) / seconds)
        }
        return rates
    }

    /// How many times longer `measured` takes than `floor`: the median over `rounds` rounds that
    /// time the two back to back. On a shared machine the cost of a process or an fsync drifts
    /// from one second to the next; timed apart, a ratio measures the drift as much as the code.
    static func pairedRatio(rounds: Int, floor: (Int) throws -> Void, measured: (Int) throws -> Void) rethrows -> (median: Double, rounds: Int) {
        try floor(-1)
        try measured(-1)
        var ratios: [Double] = []
        for round in 0..<rounds {
            let floorStart = now()
            try floor(round)
            let measuredStart = now()
            try measured(round)
            ratios.append(Double(now() - measuredStart) / Double(measuredStart - floorStart))
        }
        return (ratios.sorted()[ratios.count / 2], ratios.count)
    }
}
