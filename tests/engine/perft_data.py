"""Published perft counts from the standard starting positions (RULES.md)."""

PERFT_START: dict[str, list[int]] = {
    "english": [7, 49, 302, 1469, 7361, 36768, 179740, 845931, 3963680, 18391564, 85242128, 388623673],
    "brazilian": [7, 49, 302, 1469, 7473, 37628, 187302, 907830, 4431766, 21560022],
    "russian": [7, 49, 302, 1469, 7482, 37986, 190146, 929899, 4570586, 22444032],
    "international": [9, 81, 658, 4265, 27117, 167140, 1049442, 6483961, 41022423],
}
# Suicide moves exactly as english does, so its perft equals english's.
PERFT_START["suicide"] = PERFT_START["english"]
