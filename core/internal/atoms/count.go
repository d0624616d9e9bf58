package atoms

import "strconv"

// Count is n with its noun, for messages: "1 link", "3 links".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
