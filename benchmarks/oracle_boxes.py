"""Write the Oracle benchmark's 96 black boxes to worlds/oracle-extra/ (and print their counts).

    python benchmarks/oracle_boxes.py            # (re)write worlds/oracle-extra/*.world
    python benchmarks/oracle_boxes.py --check    # then certify them all

The committed .world files are the benchmark; this script is how they were
first written (one table row per box), kept so that a family can be
regenerated consistently. Edit a .world file directly for a one-off change.

Six families, 16 boxes each, 51 easy and 45 hard (oracle-benchmark.txt):
CII code intent, CRI boolean circuits, PSI physics systems, ERI encryption
rules, IPI interactive puzzles (kind blackbox), GSI opponent strategies in
repeated games (kind game).
"""
from __future__ import annotations

import os
import re
import sys
import textwrap

from worldspec.compiler.suite import certify_folder

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "worlds", "oracle-extra")

FAMILY_NAMES = {"CII": "code intent", "CRI": "circuit rule", "PSI": "physics system",
                "ERI": "encryption rule", "IPI": "interactive puzzle", "GSI": "game strategy"}
FAMILY_SEED = {"CII": 1000, "CRI": 2000, "PSI": 3000, "ERI": 4000, "IPI": 5000, "GSI": 6000}

BOXES: list[tuple[str, str, str, str, str]] = []  # (family, difficulty, title, summary, body)


def box(family, difficulty, title, summary, body):
    BOXES.append((family, difficulty, title, summary, textwrap.dedent(body).strip("\n")))


# ============================================================================ CII: code intent

CII_DEFS = "def uniq(xs) = fold(fn(a, x) => if contains(a, x) then a else append(a, x), [], xs)"

box("CII", "easy", "running maximum", "A hidden program over a list of integers.", """
    domain xs, list(int(-9, 9), 1, 8)
    hidden fold(fn(acc, x) => append(acc, if len(acc) == 0 then x else max(get(acc, len(acc) - 1), x)), [], xs)
    test [3, 1, 4, 1, 5]
    test [-2, -5, -1, -7]
    test [9, 2, 8]
    test [0, 0, 1, 0, 2, 1]
    test [-9, 4, -3, 6, 5, 7, 1]
""")
box("CII", "easy", "sum of the even numbers", "A hidden program over a list of integers.", """
    domain xs, list(int(-20, 20), 0, 8)
    hidden sum(filter(fn(x) => x % 2 == 0, xs))
    test [1, 2, 3, 4]
    test [7, 13, 5]
    test [-4, 10, 3, -8]
    test [20, 19, 18, 17, 16]
    test [6]
""")
box("CII", "easy", "count the vowels", "A hidden program over a text.", """
    domain s, text(0, 16)
    hidden len(filter(fn(c) => contains("aeiou", c), chars(s)))
    test "banana split"
    test "rhythm"
    test "queue"
    test "the quick fox"
    test "a e i"
""")
box("CII", "easy", "reverse the words", "A hidden program over a text.", """
    domain s, text(1, 24)
    predicate not contains(s, "  ") and not startswith(s, " ") and not endswith(s, " "), "words are separated by single spaces"
    hidden join(reverse(split(s, " ")), " ")
    test "one two three"
    test "hello world"
    test "a b c d"
    test "single"
    test "keep calm and carry on"
""")
box("CII", "easy", "digit sum", "A hidden program over a non-negative integer.", """
    domain n, int(0, 99999)
    hidden sum(map(fn(c) => int(c), chars(str(n))))
    test 12345
    test 909
    test 7
    test 99999
    test 10010
""")
box("CII", "easy", "second largest value", "A hidden program over a list of integers.", f"""
    {CII_DEFS}
    domain xs, list(int(0, 50), 2, 8)
    predicate len(uniq(xs)) >= 2, "at least two different values"
    hidden get(reverse(sort(uniq(xs))), 1)
    test [4, 9, 2, 7]
    test [10, 10, 3]
    test [1, 50, 49, 50]
    test [5, 6]
    test [33, 12, 33, 12, 8]
""")
box("CII", "easy", "remove repeats", "A hidden program over a list of small integers.", f"""
    {CII_DEFS}
    domain xs, list(int(0, 9), 0, 10)
    hidden uniq(xs)
    test [1, 2, 1, 3, 2]
    test [5, 5, 5]
    test [9, 8, 7]
    test [0, 1, 0, 1, 0, 2]
    test [4, 3, 4, 2, 3, 1]
""")
box("CII", "easy", "fibonacci number", "A hidden program over a small integer.", """
    domain n, int(0, 40)
    hidden get(fold(fn(p, i) => [get(p, 1), get(p, 0) + get(p, 1)], [0, 1], range(n)), 0)
    test 10
    test 1
    test 20
    test 7
    test 33
""")
box("CII", "easy", "gaps between neighbours", "A hidden program over a list of integers.", """
    domain xs, list(int(-9, 9), 2, 8)
    hidden map(fn(i) => abs(get(xs, i + 1) - get(xs, i)), range(len(xs) - 1))
    test [1, 4, 2, 8]
    test [-3, 3]
    test [0, 0, 5, -5, 5]
    test [9, 8, 7, 6]
    test [2, -7, 1]
""")
box("CII", "hard", "collatz steps", "A hidden program over a positive integer.", """
    domain n, int(1, 999)
    hidden get(fold(fn(st, i) => if get(st, 0) == 1 then st else [if get(st, 0) % 2 == 0 then get(st, 0) // 2 else 3 * get(st, 0) + 1, get(st, 1) + 1], [n, 0], range(200)), 1)
    test 27
    test 6
    test 97
    test 1
    test 640
""")
box("CII", "hard", "run-length code", "A hidden program over a string of a, b and c.", """
    domain s, str("abc", 1, 12)
    def runs(s) = fold(fn(rs, c) => if len(rs) > 0 and get(get(rs, len(rs) - 1), 0) == c then append(take(rs, len(rs) - 1), [c, get(get(rs, len(rs) - 1), 1) + 1]) else append(rs, [c, 1]), [], chars(s))
    hidden join(map(fn(r) => if get(r, 1) > 1 then str(get(r, 1)) + get(r, 0) else get(r, 0), runs(s)), "")
    test "aaabccaa"
    test "abc"
    test "bbbbbbb"
    test "abbaca"
    test "ccaaab"
""")
box("CII", "hard", "longest rising run", "A hidden program over a list of digits.", """
    domain xs, list(int(0, 9), 1, 10)
    hidden get(fold(fn(st, x) => let cur = if x > get(st, 2) then get(st, 0) + 1 else 1 in [cur, max(cur, get(st, 1)), x], [0, 0, -1], xs), 1)
    test [1, 2, 3, 1, 2]
    test [5, 4, 3, 2]
    test [1, 3, 2, 4, 6, 8, 1]
    test [7]
    test [2, 2, 3, 4, 4, 5]
""")
box("CII", "hard", "pairs out of order", "A hidden program over a list of integers.", """
    domain xs, list(int(0, 20), 0, 8)
    def pairs(n) = fold(fn(acc, i) => concat(acc, map(fn(j) => [i, j], range(i + 1, n))), [], range(n))
    hidden len(filter(fn(p) => get(xs, get(p, 0)) > get(xs, get(p, 1)), pairs(len(xs))))
    test [3, 1, 2]
    test [1, 2, 3, 4]
    test [5, 4, 3, 2, 1]
    test [2, 9, 4, 4, 1]
    test [10, 0, 10, 0]
""")
box("CII", "hard", "ones times zeros", "A hidden program over a positive integer.", """
    domain n, int(1, 1023)
    def bits(n) = fold(fn(acc, i) => if (n >> i) > 0 then append(acc, (n >> i) & 1) else acc, [], range(11))
    hidden let b = bits(n) in sum(b) * (len(b) - sum(b))
    test 10
    test 255
    test 100
    test 1000
    test 37
""")
box("CII", "hard", "rank of each value", "A hidden program over a list of integers.", f"""
    {CII_DEFS}
    domain xs, list(int(0, 99), 1, 8)
    hidden map(fn(x) => index_of(sort(uniq(xs)), x) + 1, xs)
    test [40, 10, 30, 10]
    test [7]
    test [99, 98, 97]
    test [5, 50, 5, 25, 75]
    test [12, 64, 33, 8, 64, 1]
""")
box("CII", "hard", "rotation by the sum", "A hidden program over a list of digits, with its documentation.", """
    domain xs, list(int(0, 9), 1, 8)
    base {
      op rotate(xs: list[int]) -> list = concat(drop(xs, 1), take(xs, 1))
         "Moves the first element to the end (a rotation one place to the left)."
    }
    rule R1 "the rotation is by the sum of the elements" {
      op rotate(xs) = let k = sum(xs) % len(xs) in concat(drop(xs, k), take(xs, k))
      statement "rotate(xs) rotates left by sum(xs) modulo the length, not by one place."
      equation "(concat (drop xs (% (sum xs) (len xs))) (take xs (% (sum xs) (len xs))))"
    }
    test [1, 2, 3, 4]
    test [2, 0, 5]
    test [9, 9]
    test [3, 1, 4, 1, 5]
    test [0, 7, 0, 0, 2, 6]
""")
# ============================================================================ CRI: boolean circuits

CRI_DEFS = """def bit(s, i) = int(get(s, i))
def val(s) = fold(fn(a, c) => a * 2 + int(c), 0, chars(s))
def bin(n, w) = join(map(fn(i) => str((n >> (w - 1 - i)) & 1), range(w)), "")"""


def cri(difficulty, title, n_in, n_out, body, tests):
    summary = f"A hidden boolean circuit: {n_in} input bits, {n_out} output bit{'s' if n_out > 1 else ''}."
    lines = "\n".join(f'test "{t}"' for t in tests)
    box("CRI", difficulty, title, summary, f"{CRI_DEFS}\ndomain x, bits({n_in})\n{textwrap.dedent(body).strip()}\n{lines}")


cri("easy", "inverter bank", 6, 6, 'hidden join(map(fn(c) => if c == "0" then "1" else "0", chars(x)), "")',
    ["101100", "000000", "111111", "010101", "110010"])
cri("easy", "bit reversal", 8, 8, 'hidden reverse(x)',
    ["10000000", "11010010", "00001111", "10101010", "01100111"])
cri("easy", "paired and gates", 8, 4, 'hidden join(map(fn(i) => str(bit(x, 2 * i) & bit(x, 2 * i + 1)), range(4)), "")',
    ["11001111", "10101010", "11111111", "01110011", "11000000"])
cri("easy", "parity bit", 7, 8, 'hidden x + str(fold(fn(a, c) => a ^ int(c), 0, chars(x)))',
    ["1010101", "0000000", "1110000", "0100011", "1111111"])
cri("easy", "majority vote", 3, 1, 'hidden if bit(x, 0) + bit(x, 1) + bit(x, 2) >= 2 then "1" else "0"',
    ["110", "001", "101", "010", "111"])
cri("easy", "masked xor", 6, 6, """
    param MASK = pick(["101101", "011011", "110001", "100110"]) default "101101"
    hidden join(map(fn(i) => str(bit(x, i) ^ int(get(MASK, i))), range(6)), "")
""", ["000000", "111111", "101010", "110011", "000111"])
cri("easy", "shift register", 8, 8, """
    base {
      op shift(x: str) -> str = drop(x, 1) + "0"
         "Shifts the bits one place to the left; the last bit becomes 0."
    }
    rule R1 "the bit shifted out comes back in" {
      op shift(x) = drop(x, 1) + take(x, 1)
      statement "shift(x) rotates left: the first bit moves to the end."
      equation "(+ (drop x 1) (take x 1))"
    }
""", ["10000001", "11110000", "01010101", "10011010", "00000011"])
cri("easy", "two-bit adder", 4, 3, 'hidden bin(val(take(x, 2)) + val(drop(x, 2)), 3)',
    ["0101", "1111", "1001", "0011", "1110"])
cri("easy", "or of the two halves", 8, 4, 'hidden join(map(fn(i) => str(bit(x, i) | bit(x, i + 4)), range(4)), "")',
    ["10000001", "00110101", "11110000", "00000000", "01001000"])
cri("hard", "four-bit adder", 8, 5, 'hidden bin(val(take(x, 4)) + val(drop(x, 4)), 5)',
    ["00110101", "11111111", "10000111", "01100110", "00011110"])
cri("hard", "two-bit multiplier", 4, 4, 'hidden bin(val(take(x, 2)) * val(drop(x, 2)), 4)',
    ["1111", "1011", "0110", "1101", "0111"])
cri("hard", "magnitude comparator", 8, 3, """
    hidden let a = val(take(x, 4)) in let b = val(drop(x, 4)) in (if a > b then "1" else "0") + (if a == b then "1" else "0") + (if a < b then "1" else "0")
""", ["10010011", "01010101", "00111100", "11110111", "10000001"])
cri("hard", "gray code", 6, 6, 'hidden bin(val(x) ^ (val(x) >> 1), 6)',
    ["101101", "111111", "010010", "100000", "011001"])
cri("hard", "ones counter", 7, 3, 'hidden bin(count(x, "1"), 3)',
    ["1011001", "1111111", "0000001", "0110110", "1000000"])
cri("hard", "four-way multiplexer", 6, 1, 'hidden get(x, 2 + val(take(x, 2)))',
    ["001000", "010100", "101101", "110001", "110010"])
cri("hard", "feedback shift register", 8, 8, 'hidden str(bit(x, 0) ^ bit(x, 2) ^ bit(x, 3) ^ bit(x, 4)) + take(x, 7)',
    ["10000000", "10110001", "00101100", "11111111", "01011010"])

# ============================================================================ PSI: physics systems

PI = "param PI = 3.141592653589793"

box("PSI", "easy", "falling ball", "A ball is dropped from rest on an unfamiliar planet. Input: the time t in "
    "seconds. Output: the distance it has fallen, in metres.", """
    param G = pick([3.7, 7.3, 11.6, 13.2, 24.8]) default 11.6
    domain t, float(0, 10)
    base {
      op fall(t: float) -> float = round(0.5 * 9.81 * t * t, 3)
         "The distance fallen from rest after t seconds: 4.905 t^2 (g = 9.81 m/s^2)."
    }
    rule R1 "gravity is not the Earth's" {
      op fall(t) = round(0.5 * G * t * t, 3)
      statement "The distance fallen is G t^2 / 2 with G = {G} m/s^2."
      equation "(round (* 0.5 {G} t t) 3)"
    }
    within 0.01
    test 2.0
    test 0.5
    test 7.25
    test 3.0
    test 9.9
""")
box("PSI", "easy", "rolling cart", "A cart rolls at a constant hidden speed. Inputs: its starting position x0 "
    "(metres) and the time t (seconds). Output: its position.", """
    param V = pick([1.5, 2.25, 3.5, 4.75, -2.5]) default 3.5
    domain x0, float(-50, 50)
    domain t, float(0, 20)
    hidden round(x0 + V * t, 3)
    within 0.01
    test 0.0, 4.0
    test 10.0, 2.5
    test -20.0, 12.0
    test 5.5, 0.0
    test 33.0, 19.0
""")
box("PSI", "easy", "spring force", "A mass hangs on a spring. Input: its displacement x from rest, in metres. "
    "Output: the force on it, in newtons.", """
    param K = pick([12.0, 25.0, 40.0, 7.5]) default 25.0
    domain x, float(-5, 5)
    hidden round(0.0 - K * x, 3)
    within 0.01
    test 1.0
    test -0.4
    test 2.6
    test -4.5
    test 0.12
""")
box("PSI", "easy", "pendulum period", "A small-swing pendulum on an unfamiliar planet. Input: its length L in "
    "metres. Output: its period in seconds.", f"""
    {PI}
    param G = pick([3.7, 7.3, 13.2, 24.8]) default 3.7
    domain L, float(0.1, 10)
    hidden round(2 * PI * sqrt(L / G), 3)
    within 0.01
    test 1.0
    test 4.0
    test 0.25
    test 9.0
    test 2.2
""")
box("PSI", "easy", "cannon range", "A cannon on flat ground of an unfamiliar planet. Inputs: the launch speed v "
    "(m/s) and the elevation a (degrees). Output: the distance to the landing point, in metres.", f"""
    {PI}
    param G = pick([3.7, 7.3, 13.2, 24.8]) default 7.3
    domain v, float(1, 40)
    domain a, int(5, 85)
    hidden round(v * v * sin(2 * a * PI / 180) / G, 3)
    within 0.01
    test 10.0, 45
    test 20.0, 30
    test 35.0, 80
    test 5.0, 10
    test 28.0, 60
""")
box("PSI", "easy", "sliding to a stop", "A puck slides on a rough floor. Input: its initial speed v0 in m/s. "
    "Output: the distance it slides before it stops, in metres.", """
    param A = pick([1.5, 2.5, 3.9, 4.9]) default 2.5
    domain v0, float(0, 20)
    hidden round(v0 * v0 / (2 * A), 3)
    within 0.01
    test 5.0
    test 10.0
    test 1.5
    test 18.0
    test 7.7
""")
box("PSI", "easy", "sealed gas", "A gas in a sealed rigid container. Inputs: the amount n (mol) and the "
    "temperature T (kelvin). Output: the pressure, in pascals.", """
    param VOL = pick([0.01, 0.025, 0.05, 0.1]) default 0.025
    domain n, float(0.1, 5)
    domain T, float(100, 600)
    hidden round(n * 8.314 * T / VOL, 3)
    within 0.01
    test 1.0, 300.0
    test 2.0, 150.0
    test 0.5, 500.0
    test 4.2, 273.0
    test 0.1, 100.0
""")
box("PSI", "easy", "ball thrown upward", "A ball is thrown straight up on an unfamiliar planet. Inputs: the launch "
    "speed v0 (m/s) and the time t (s). Output: its height above the launch point, in metres.", """
    param G = pick([3.7, 7.3, 13.2, 24.8]) default 13.2
    domain v0, float(0, 30)
    domain t, float(0, 5)
    hidden round(v0 * t - 0.5 * G * t * t, 3)
    within 0.01
    test 10.0, 1.0
    test 20.0, 2.5
    test 5.0, 3.0
    test 30.0, 0.5
    test 15.0, 4.0
""")
box("PSI", "easy", "mass on a spring", "A mass oscillates on a spring of hidden stiffness. Input: the mass m in "
    "kilograms. Output: the period of oscillation, in seconds.", f"""
    {PI}
    param K = pick([12.0, 25.0, 40.0, 7.5]) default 40.0
    domain m, float(0.1, 10)
    hidden round(2 * PI * sqrt(m / K), 3)
    within 0.01
    test 1.0
    test 4.0
    test 0.5
    test 9.5
    test 2.2
""")
box("PSI", "hard", "damped oscillator", "A mass on a spring in a viscous liquid, released from rest. Inputs: the "
    "starting displacement x0 (m) and the time t (s). Output: the displacement at time t.", """
    param GAMMA = pick([0.1, 0.2, 0.35]) default 0.2
    param OMEGA = pick([1.5, 2.0, 3.1]) default 2.0
    domain x0, float(-5, 5)
    domain t, float(0, 10)
    hidden round(x0 * exp(0.0 - GAMMA * t) * cos(OMEGA * t), 3)
    within 0.01
    test 1.0, 1.0
    test 2.0, 3.5
    test -3.0, 0.8
    test 4.0, 6.0
    test 1.5, 9.0
""")
box("PSI", "hard", "sliding against drag", "A sled is pushed off on a surface with air drag proportional to speed. "
    "Inputs: the initial speed v0 (m/s) and the time t (s). Output: the distance covered.", """
    param TAU = pick([1.5, 2.0, 3.5, 5.0]) default 2.0
    domain v0, float(0, 50)
    domain t, float(0, 10)
    hidden round(v0 * TAU * (1 - exp(0.0 - t / TAU)), 3)
    within 0.01
    test 10.0, 1.0
    test 10.0, 8.0
    test 30.0, 4.0
    test 2.0, 9.5
    test 45.0, 2.5
""")
box("PSI", "hard", "imperfect collision", "Two carts collide head-on on a track. Inputs: m1 (kg), v1 (m/s), m2 (kg), "
    "v2 (m/s). Output: their velocities after the collision, [v1, v2].", """
    param E = pick([0.3, 0.5, 0.7, 0.9]) default 0.5
    domain m1, float(0.5, 10)
    domain v1, float(-10, 10)
    domain m2, float(0.5, 10)
    domain v2, float(-10, 10)
    predicate v1 > v2, "the carts must approach each other (v1 > v2)"
    hidden let p = m1 * v1 + m2 * v2 in let m = m1 + m2 in [round((p + m2 * E * (v2 - v1)) / m, 3), round((p + m1 * E * (v1 - v2)) / m, 3)]
    within 0.01
    test 1.0, 4.0, 1.0, 0.0
    test 2.0, 3.0, 1.0, -3.0
    test 5.0, 1.0, 0.5, -6.0
    test 1.5, 8.0, 6.0, 2.0
    test 3.0, 0.5, 3.0, -0.5
""")
box("PSI", "hard", "bouncing ball", "A ball is dropped onto a hard floor and bounces. Inputs: the drop height h0 "
    "(m) and a count n. Output: the time in seconds from release to the n-th impact.", """
    param G = pick([3.7, 7.3, 9.81, 13.2]) default 9.81
    param E = pick([0.5, 0.6, 0.75, 0.85]) default 0.75
    domain h0, float(0.5, 20)
    domain n, int(1, 8)
    hidden round(sqrt(2 * h0 / G) * (1 + 2 * sum(map(fn(k) => E ** k, range(1, n)))), 3)
    within 0.01
    test 5.0, 1
    test 5.0, 3
    test 12.0, 2
    test 1.0, 6
    test 18.5, 8
""")
box("PSI", "hard", "block on a ramp", "A block is released on a rough ramp. Inputs: the ramp angle theta (degrees) "
    "and the time t (s). Output: the distance it has slid down.", f"""
    {PI}
    param G = pick([7.3, 9.81, 13.2]) default 9.81
    param MU = pick([0.2, 0.35, 0.5, 0.7]) default 0.35
    domain theta, int(0, 80)
    domain t, float(0, 10)
    hidden let a = G * (sin(theta * PI / 180) - MU * cos(theta * PI / 180)) in if a <= 0 then 0.0 else round(0.5 * a * t * t, 3)
    within 0.01
    test 45, 2.0
    test 15, 5.0
    test 30, 3.0
    test 70, 1.5
    test 60, 6.0
""")
box("PSI", "hard", "rocket burn", "A rocket burns fuel at a constant rate in empty space. Inputs: the initial mass "
    "m0 (kg) and the burn time t (s). Output: its speed gained, in m/s.", """
    param U = pick([800.0, 1200.0, 2500.0]) default 1200.0
    param R = pick([2.0, 4.0, 5.0]) default 4.0
    domain m0, float(10, 100)
    domain t, float(0, 10)
    predicate R * t < m0 - 1, "the rocket runs out of fuel before that time"
    hidden round(U * log(m0 / (m0 - R * t)), 3)
    within 0.01
    test 50.0, 5.0
    test 100.0, 2.0
    test 20.0, 4.0
    test 75.0, 9.5
    test 45.0, 10.0
""")
box("PSI", "hard", "wide-swing pendulum", "A pendulum released from rest at a large angle. Inputs: the release "
    "angle theta0 (degrees) and the time t (s). Output: its angle in degrees at time t (simulated in steps of "
    "0.01 s).", f"""
    {PI}
    param G = pick([3.7, 9.81, 13.2]) default 9.81
    param L = pick([0.5, 1.0, 2.0]) default 2.0
    domain theta0, int(1, 170)
    domain t, float(0, 5)
    hidden let st = fold(fn(s, i) => let w = get(s, 1) - G / L * sin(get(s, 0)) * 0.01 in [get(s, 0) + w * 0.01, w], [theta0 * PI / 180, 0.0], range(round(t * 100))) in round(get(st, 0) * 180 / PI, 3)
    within 0.01
    test 10, 1.0
    test 90, 1.5
    test 150, 2.0
    test 45, 4.0
    test 120, 0.7
""")

# ============================================================================ ERI: encryption rules

ERI_DEFS = 'def shift(c, k) = if c == " " then c else chr((ord(c) - 97 + k) % 26 + 97)'
ERI_SUMMARY = "A hidden encryption rule: plaintext in, ciphertext out."
TEXT_TESTS = ['test "attack at dawn"', 'test "hello world"', 'test "zebra"', 'test "meet me by the river"',
              'test "quiz"']
WORD_TESTS = ['test "attackatdawn"', 'test "helloworld"', 'test "zebra"', 'test "meetmebytheriver"', 'test "quiz"']


def eri(difficulty, title, body, tests=TEXT_TESTS, domain="text(1, 24)"):
    box("ERI", difficulty, title, ERI_SUMMARY,
        f"{ERI_DEFS}\ndomain s, {domain}\n{textwrap.dedent(body).strip()}\n" + "\n".join(tests))


eri("easy", "shifted alphabet", """
    param K = pick(1..25) default 7
    hidden join(map(fn(c) => shift(c, K), chars(s)), "")
""")
eri("easy", "mirrored alphabet", 'hidden join(map(fn(c) => if c == " " then c else chr(219 - ord(c)), chars(s)), "")')
eri("easy", "backwards", "hidden reverse(s)")
eri("easy", "swapped pairs", """
    hidden join(map(fn(i) => if i % 2 == 0 then (if i + 1 < len(s) then get(s, i + 1) else get(s, i)) else get(s, i - 1), range(len(s))), "")
""", WORD_TESTS, "str(1, 16)")
eri("easy", "vowel rotation", 'hidden join(map(fn(c) => if contains("aeiou", c) then get("eioua", index_of("aeiou", c)) else c, chars(s)), "")')
eri("easy", "mirrored words", 'hidden join(map(fn(w) => reverse(w), split(s, " ")), " ")')
eri("easy", "keyword alphabet", """
    param CIPHER = pick(["zebrascdfghijklmnopqtuvwxy", "qwertyuiopasdfghjklzxcvbnm", "kryptosabcdefghijlmnquvwxz"]) default "zebrascdfghijklmnopqtuvwxy"
    hidden join(map(fn(c) => if c == " " then c else get(CIPHER, ord(c) - 97), chars(s)), "")
""")
eri("easy", "doubled letters", 'hidden join(map(fn(c) => c + c, filter(fn(c) => c != " ", chars(s))), "")')
eri("hard", "keyword shifts", """
    param KEY = pick(["lemon", "orbit", "cabin", "quartz"]) default "lemon"
    hidden join(map(fn(p) => let i = get(p, 0) in let c = get(p, 1) in if c == " " then c else shift(c, ord(get(KEY, (i - count(take(s, i), " ")) % len(KEY))) - 97), enumerate(chars(s))), "")
""")
eri("hard", "growing shift", """
    base {
      op enc(s: str) -> str = join(map(fn(c) => shift(c, 3), chars(s)), "")
         "A Caesar cipher: every letter moves three places forward in the alphabet; spaces stay."
    }
    rule R1 "the shift grows along the text" {
      op enc(s) = join(map(fn(p) => shift(get(p, 1), 3 + get(p, 0)), enumerate(chars(s))), "")
      statement "The character at position i (from 0, spaces included) moves 3 + i places forward."
      equation "(join (map (fn (p) (shift (get p 1) (+ 3 (get p 0)))) (enumerate (chars s))) \\"\\")"
    }
""")
eri("hard", "affine letters", """
    param A = pick([3, 5, 7, 11]) default 5
    param B = pick(1..25) default 8
    hidden join(map(fn(c) => if c == " " then c else chr((A * (ord(c) - 97) + B) % 26 + 97), chars(s)), "")
""")
eri("hard", "two rails", "hidden join(map(fn(i) => get(s, i), concat(range(0, len(s), 2), range(1, len(s), 2))), \"\")",
    WORD_TESTS, "str(2, 16)")
eri("hard", "running key", """
    param K = pick(1..25) default 4
    hidden join(map(fn(i) => shift(get(s, i), if i == 0 then K else ord(get(s, i - 1)) - 97), range(len(s))), "")
""", WORD_TESTS, "str(1, 16)")
eri("hard", "three columns", """
    hidden join(map(fn(i) => get(s, i), concat(concat(range(2, len(s), 3), range(0, len(s), 3)), range(1, len(s), 3))), "")
""", WORD_TESTS, "str(3, 16)")
eri("hard", "word-length shift", 'hidden join(map(fn(w) => join(map(fn(c) => shift(c, len(w)), chars(w)), ""), split(s, " ")), " ")')
eri("hard", "see-saw shift", """
    param K = pick(1..12) default 5
    base {
      op enc(s: str) -> str = join(map(fn(c) => shift(c, K), chars(s)), "")
         "A Caesar cipher: every letter moves {K} places forward in the alphabet; spaces stay."
    }
    rule R1 "odd positions move backwards" {
      op enc(s) = join(map(fn(p) => shift(get(p, 1), if get(p, 0) % 2 == 0 then K else 0 - K), enumerate(chars(s))), "")
      statement "Characters at even positions move {K} places forward, those at odd positions {K} places back."
      equation "(join (map (fn (p) (shift (get p 1) (if (== (% (get p 0) 2) 0) {K} (- 0 {K})))) (enumerate (chars s))) \\"\\")"
    }
""")

# ============================================================================ IPI: interactive puzzles

WORDLE = ('def wordle(g, t) = join(map(fn(i) => if get(g, i) == get(t, i) then "G" else if contains(t, get(g, i)) '
          'then "Y" else "-", range(len(t))), "")')
MASTERMIND = "\n    ".join([  # joined at the body's indentation, so that dedent still applies
    "def blacks(g, t) = len(filter(fn(i) => get(g, i) == get(t, i), range(len(t))))",
    "def common(g, t, colours) = sum(map(fn(c) => min(count(g, c), count(t, c)), chars(colours)))"])
WORDS8 = '"crane", "slate", "pride", "shore", "mound", "tilth", "gawky", "bluff"'
WORDS40 = ('"about", "alert", "blame", "brick", "cabin", "chest", "cloud", "crane", "dance", "drift", "eagle", '
           '"fable", "flint", "grape", "haste", "hover", "irony", "joker", "knelt", "lemon", "lunar", "mirth", '
           '"noble", "ocean", "pilot", "plumb", "quart", "rivet", "scald", "shore", "snail", "tiger", "toast", '
           '"umbra", "vapor", "wheat", "whisk", "yacht", "zesty", "gloom"')


def ipi(difficulty, title, summary, body):
    box("IPI", difficulty, title, summary, textwrap.dedent(body).strip())


ipi("easy", "higher or lower", "A hidden number from 1 to 100; each guess is answered higher, lower or correct.", """
    param SECRET = pick(1..100) default 37
    domain guess, int(1, 100)
    goal SECRET, "the hidden number"
    hidden if guess < target then "higher" else if guess > target then "lower" else "correct"
""")
ipi("easy", "how far", "A hidden number from 0 to 200; each guess is answered with a number.", """
    param SECRET = pick(0..200) default 143
    domain guess, int(0, 200)
    goal SECRET, "the hidden number"
    hidden abs(guess - target)
""")
ipi("easy", "treasure grid", "A treasure hides on a 10 x 10 grid; a guessed square [x, y] is answered with a "
    "number.", """
    param SECRET = pick([[3, 7], [8, 2], [5, 5], [0, 9], [6, 1]]) default [3, 7]
    domain p, list(int(0, 9), 2, 2)
    goal SECRET, "the treasure's square [x, y]"
    hidden abs(get(p, 0) - get(target, 0)) + abs(get(p, 1) - get(target, 1))
""")
ipi("easy", "eight words", f"One of eight words is hidden; each guessed word gets a five-letter answer.", f"""
    {WORDLE}
    param SECRET = pick([{WORDS8}]) default "mound"
    domain w, choice({WORDS8})
    goal SECRET, "the hidden word"
    hidden wordle(w, target)
""")
ipi("easy", "six switches", "Six hidden switch positions (a string of 6 bits); each guess gets a count.", """
    param SECRET = pick(["101101", "011100", "110010", "001111"]) default "011100"
    domain b, bits(6)
    goal SECRET, "the hidden switch positions"
    hidden str(len(filter(fn(i) => get(b, i) == get(target, i), range(6)))) + " of 6 right"
""")
ipi("easy", "hidden letter", "A hidden lowercase letter; each guessed letter gets an answer.", """
    param SECRET = pick(["q", "d", "w", "k", "s"]) default "q"
    domain c, str(1, 1)
    goal SECRET, "the hidden letter"
    hidden if c < target then "later" else if c > target then "earlier" else "correct"
""")
ipi("easy", "two-digit lock", "A two-digit combination lock; each tried combination gets one sign per digit.", """
    param SECRET = pick(["73", "19", "46", "82", "05"]) default "73"
    domain g, str("0123456789", 2, 2)
    goal SECRET, "the combination"
    hidden join(map(fn(i) => if get(g, i) < get(target, i) then "+" else if get(g, i) > get(target, i) then "-" else "=", range(2)), "")
""")
ipi("easy", "three lamps", "Three lamps, each red, green, blue or yellow (R, G, B, Y); each guess gets a count.", """
    param SECRET = pick(["RGB", "YYR", "BGG", "GBY"]) default "BGG"
    domain g, str("RGBY", 3, 3)
    goal SECRET, "the colours of the three lamps"
    hidden str(len(filter(fn(i) => get(g, i) == get(target, i), range(3)))) + " in the right place"
""")
ipi("hard", "colour code", "A hidden code of four pegs, each one of six colours (digits 1-6); each guess gets "
    "feedback.", f"""
    {MASTERMIND}
    param SECRET = pick(["3516", "1162", "6543", "2245"]) default "3516"
    domain guess, str("123456", 4, 4)
    goal SECRET, "the hidden code"
    hidden let b = blacks(guess, target) in str(b) + " black, " + str(common(guess, target, "123456") - b) + " white"
""")
ipi("hard", "bulls and cows", "A hidden number of four different digits; each guess gets feedback.", f"""
    {MASTERMIND}
    def distinct(s) = all(map(fn(i) => count(s, get(s, i)) == 1, range(len(s))))
    param SECRET = pick(["4271", "9035", "6180", "5823"]) default "4271"
    domain guess, str("0123456789", 4, 4)
    predicate distinct(guess), "the four digits must all be different"
    goal SECRET, "the hidden number"
    hidden let b = blacks(guess, target) in str(b) + " bulls, " + str(common(guess, target, "0123456789") - b) + " cows"
""")
ipi("hard", "forty words", "One of forty five-letter words is hidden; each guessed word gets a five-letter answer.", f"""
    {WORDLE}
    param SECRET = pick([{WORDS40}]) default "rivet"
    domain w, choice({WORDS40})
    goal SECRET, "the hidden word"
    hidden wordle(w, target)
""")
ipi("hard", "ten switches", "Ten hidden switch positions (a string of 10 bits); each guess gets a count.", """
    param SECRET = pick(["1011001110", "0110110001", "1110001011"]) default "1011001110"
    domain b, bits(10)
    goal SECRET, "the hidden switch positions"
    hidden str(len(filter(fn(i) => get(b, i) == get(target, i), range(10)))) + " right"
""")
ipi("hard", "seating order", "Five guests a-e sit in a hidden order; each guessed order gets a count.", """
    def distinct(s) = all(map(fn(i) => count(s, get(s, i)) == 1, range(len(s))))
    param SECRET = pick(["dbeac", "cadeb", "ebcad", "bdace"]) default "dbeac"
    domain p, str("abcde", 5, 5)
    predicate distinct(p), "each guest appears exactly once"
    goal SECRET, "the seating order"
    hidden str(len(filter(fn(i) => get(p, i) == get(target, i), range(5)))) + " seated right"
""")
ipi("hard", "compass hunt", "A beacon hides on a 30 x 30 grid; a guessed square [x, y] gets a direction.", """
    param SECRET = pick([[17, 4], [22, 25], [9, 13], [28, 0]]) default [17, 4]
    domain p, list(int(0, 29), 2, 2)
    goal SECRET, "the beacon's square [x, y]"
    hidden let dx = get(target, 0) - get(p, 0) in let dy = get(target, 1) - get(p, 1) in if dx == 0 and dy == 0 then "found" else (if dy > 0 then "north" else if dy < 0 then "south" else "") + (if dx > 0 then "east" else if dx < 0 then "west" else "")
""")
ipi("hard", "five-peg code", "A hidden code of five pegs, each one of four colours (A-D); each guess gets "
    "feedback.", f"""
    {MASTERMIND}
    param SECRET = pick(["CADBB", "DDACB", "BCCAD"]) default "CADBB"
    domain guess, str("ABCD", 5, 5)
    goal SECRET, "the hidden code"
    hidden let b = blacks(guess, target) in str(b) + " black, " + str(common(guess, target, "ABCD") - b) + " white"
""")
ipi("hard", "four-letter word", "A hidden string of four letters from a to f; each guess gets a four-letter "
    "answer.", f"""
    {WORDLE}
    param SECRET = pick(["fade", "cafe", "bead", "dace"]) default "fade"
    domain w, str("abcdef", 4, 4)
    goal SECRET, "the hidden string"
    hidden wordle(w, target)
""")

# ============================================================================ GSI: game strategies

PD = """moves "C", "D"
payoff "C", "C", 3, 3
payoff "C", "D", 0, 5
payoff "D", "C", 5, 0
payoff "D", "D", 1, 1"""
RPS = """moves "R", "P", "S"
payoff "R", "R", 0, 0
payoff "R", "P", -1, 1
payoff "R", "S", 1, -1
payoff "P", "R", 1, -1
payoff "P", "P", 0, 0
payoff "P", "S", -1, 1
payoff "S", "R", -1, 1
payoff "S", "P", 1, -1
payoff "S", "S", 0, 0"""
PENNIES = """moves "H", "T"
payoff "H", "H", 1, -1
payoff "H", "T", -1, 1
payoff "T", "H", -1, 1
payoff "T", "T", 1, -1"""
GAME_SUMMARY = {
    "PD": "A repeated prisoner's dilemma (C cooperate, D defect) against a hidden strategy.",
    "RPS": "Repeated rock-paper-scissors (R, P, S) against a hidden strategy.",
    "PENNIES": "Repeated matching pennies (H, T): you win a round when the coins match.",
}
GAMES = {"PD": PD, "RPS": RPS, "PENNIES": PENNIES}


def gsi(difficulty, title, game, opponent, tests=(6, 10)):
    body = f"{GAMES[game]}\n{textwrap.dedent(opponent).strip()}\n" + \
        "\n".join(f"test {t}" for t in tests)
    box("GSI", difficulty, title, GAME_SUMMARY[game], body)


gsi("easy", "the pushover", "PD", """
    opponent allc "always cooperates" {
      move "C"
    }
""")
gsi("easy", "the hawk", "PD", """
    opponent alld "always defects" {
      move "D"
    }
""")
gsi("easy", "the mirror", "PD", """
    opponent tft "tit-for-tat" {
      start "C"
      move state
      next theirs
    }
""")
gsi("easy", "the stone", "RPS", """
    opponent rock "always rock" {
      move "R"
    }
""")
gsi("easy", "the wheel", "RPS", """
    opponent cycle "rock, paper, scissors, rock, ..." {
      start 0
      move get(["R", "P", "S"], state % 3)
      next state + 1
    }
""")
gsi("easy", "the metronome", "PD", """
    opponent alternate "cooperates and defects by turns" {
      start 0
      move if state % 2 == 0 then "C" else "D"
      next state + 1
    }
""")
gsi("easy", "the answerer", "RPS", """
    opponent beat_last "plays what beats your previous move" {
      start "R"
      move state
      next if theirs == "R" then "P" else if theirs == "P" then "S" else "R"
    }
""")
gsi("easy", "the echo", "PENNIES", """
    opponent copy "shows the face you showed last" {
      start "T"
      move state
      next theirs
    }
""")
gsi("hard", "the patient one", "PD", """
    opponent tf2t "defects only after two defections in a row" {
      start 0
      move if state >= 2 then "D" else "C"
      next if theirs == "D" then state + 1 else 0
    }
""")
gsi("hard", "the second chance", "PD", """
    opponent grudger2 "forgives your first defection; defects forever after your second" {
      start 0
      move if state >= 2 then "D" else "C"
      next if theirs == "D" then state + 1 else state
    }
""")
gsi("hard", "the majority keeper", "PD", """
    opponent majority "cooperates while you have cooperated at least as often as you defected" {
      start 0
      move if state >= 0 then "C" else "D"
      next if theirs == "C" then state + 1 else state - 1
    }
""")
gsi("hard", "the statistician", "RPS", """
    opponent frequent "beats your most frequent move so far (ties: rock, paper, scissors)" {
      start [0, 0, 0]
      move let m = max(state) in if get(state, 0) == m then "P" else if get(state, 1) == m then "S" else "R"
      next if theirs == "R" then [get(state, 0) + 1, get(state, 1), get(state, 2)] else if theirs == "P" then [get(state, 0), get(state, 1) + 1, get(state, 2)] else [get(state, 0), get(state, 1), get(state, 2) + 1]
    }
""")
gsi("hard", "the tester", "PD", """
    opponent tester "defects first; exploits you unless you hit back" {
      start "probe"
      move if state == "probe" then "D" else if state == "tft_C" then "C" else if state == "tft_D" then "D" else if state == "exploit_C" then "C" else "D"
      next if state == "probe" then (if theirs == "D" then "tft_C" else "exploit_C") else if state == "tft_C" or state == "tft_D" then (if theirs == "D" then "tft_D" else "tft_C") else (if state == "exploit_C" then "exploit_D" else "exploit_C")
    }
""")
gsi("hard", "the sore loser", "RPS", """
    opponent wsls "keeps its move after a win; after a draw or a loss plays what beats your last move" {
      start "P"
      move state
      next if (mine == "R" and theirs == "S") or (mine == "P" and theirs == "R") or (mine == "S" and theirs == "P") then mine else (if theirs == "R" then "P" else if theirs == "P" then "S" else "R")
    }
""")
gsi("hard", "the long memory", "RPS", """
    opponent lagged "plays what beats your move of two rounds ago" {
      start ["S", "S"]
      move if get(state, 0) == "R" then "P" else if get(state, 0) == "P" then "S" else "R"
      next [get(state, 1), theirs]
    }
""")
gsi("hard", "the escalator", "PD", """
    opponent gradual "after your k-th defection, defects k times, then cooperates twice" {
      start [0, 0, 0]
      move if get(state, 1) > 0 then "D" else "C"
      next let k = get(state, 0) + (if theirs == "D" then 1 else 0) in if get(state, 1) > 0 then [k, get(state, 1) - 1, if get(state, 1) == 1 then 2 else 0] else if get(state, 2) > 0 then [k, 0, get(state, 2) - 1] else if theirs == "D" then [k, k, 0] else [k, 0, 0]
    }
""")

# ============================================================================ writing


def slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def render(family, difficulty, n, title, summary, body) -> tuple[str, str]:
    code = f"{family}-{difficulty[0].upper()}{n:02d}"
    kind = "game" if family == "GSI" else "blackbox"
    seed = FAMILY_SEED[family] + (0 if difficulty == "easy" else 100) + n
    text = (f"# Oracle benchmark: {FAMILY_NAMES[family]} inference, {difficulty} box {n}.\n"
            f"world \"{code} {title}\" version 1\nkind {kind}\nseed {seed}\n"
            f"summary \"{summary}\"\nfamily {family}\ndifficulty {difficulty}\n\n{body}\n\n"
            "budget { turns 10 shots 1 }\n")
    return f"{code.lower()}-{slug(title)}.world", text


def main(argv) -> int:
    os.makedirs(OUT, exist_ok=True)
    counters: dict = {}
    written = []
    for family, difficulty, title, summary, body in BOXES:
        counters[(family, difficulty)] = counters.get((family, difficulty), 0) + 1
        name, text = render(family, difficulty, counters[(family, difficulty)], title, summary, body)
        with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
            f.write(text)
        written.append(name)
    for old in os.listdir(OUT):
        if old.endswith(".world") and old not in written:
            os.remove(os.path.join(OUT, old))
    easy = sum(v for (f, d), v in counters.items() if d == "easy")
    print(f"wrote {len(written)} boxes to {os.path.relpath(OUT)}: {easy} easy, {len(written) - easy} hard")
    for fam in FAMILY_NAMES:
        print(f"  {fam}: {counters.get((fam, 'easy'), 0)} easy, {counters.get((fam, 'hard'), 0)} hard")
    if "--check" in argv:
        report = certify_folder(OUT)
        print(f"certified {report['certified']} of {report['worlds']}")
        for p in report["problems"]:
            print("  -", p)
        return 1 if report["problems"] else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
