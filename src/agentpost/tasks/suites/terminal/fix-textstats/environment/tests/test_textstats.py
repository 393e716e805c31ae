import unittest

from textstats import mean_word_length, top_word, word_count


class TextStatsTest(unittest.TestCase):
    def test_word_count_simple(self):
        self.assertEqual(word_count("the quick brown fox"), 4)

    def test_word_count_messy_whitespace(self):
        self.assertEqual(word_count("a  b\tc\nd "), 4)

    def test_mean_word_length(self):
        self.assertAlmostEqual(mean_word_length("ab abc"), 2.5)

    def test_top_word(self):
        self.assertEqual(top_word("b a B"), "b")


if __name__ == "__main__":
    unittest.main()
