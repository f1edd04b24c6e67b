package forge

import "fmt"

// giteaDialect is how Gitea's API v1 answers the world of
// testdata/api/README.md, and how its calls look.
func giteaDialect() dialect {
	const repo = "/api/v1/repos/octocat/Hello-World"
	return dialect{
		typ:        Gitea,
		authHeader: "Authorization",
		authValue:  "token " + testToken,
		routes: []route{
			{method: "POST", path: repo + "/statuses/" + headSHA, status: 201, file: "gitea/status.json"},
			{method: "GET", path: "/api/v1/user", file: "gitea/user.json"},
			{method: "GET", path: repo + "/issues/1347/comments", query: query("page", "2"), file: "gitea/comments_1347_page2.json"},
			{method: "GET", path: repo + "/issues/1347/comments", file: "gitea/comments_1347_page1.json",
				header: nextPage(repo + "/issues/1347/comments?limit=50&page=2")},
			{method: "GET", path: repo + "/issues/1348/comments", file: "gitea/comments_1348.json"},
			{method: "POST", path: repo + "/issues/1348/comments", status: 201, file: "gitea/comment_2001.json"},
			{method: "PATCH", path: repo + "/issues/comments/2001", file: "gitea/comment_2001.json"},
			{method: "PATCH", path: repo + "/issues/comments/1003", file: "gitea/comment_1003.json"},
			{method: "PATCH", path: repo + "/issues/comments/999", status: 404, file: "gitea/not_found.json"},
			{method: "GET", path: repo + "/pulls", query: query("state", "open"), file: "gitea/pulls_open.json"},
			// The first page of closed pull requests reaches one updated
			// before the poll's time: its next page has no route.
			{method: "GET", path: repo + "/pulls", query: query("state", "closed", "sort", "recentupdate", "page", "1"), file: "gitea/pulls_closed.json",
				header: nextPage(repo + "/pulls?limit=50&page=2&sort=recentupdate&state=closed")},
			{method: "GET", path: repo + "/pulls/1341", file: "gitea/pull_1341.json"},
			{method: "GET", path: repo + "/collaborators/octocat/permission", file: "gitea/permission_octocat.json"},
			{method: "GET", path: repo + "/collaborators/mona/permission", file: "gitea/permission_mona.json"},
			{method: "GET", path: repo + "/collaborators/stranger/permission", file: "gitea/permission_stranger.json"},
		},
		status:       "POST " + repo + "/statuses/" + headSHA,
		contextField: "context",
		states:       map[State]string{StatePending: "pending", StateSuccess: "success", StateFailure: "failure", StateSuperseded: "error"},
		selfCall:     "GET /api/v1/user",
		listComments: func(n int) string { return fmt.Sprintf("GET %s/issues/%d/comments", repo, n) },
		createComment: func(n int) string {
			return fmt.Sprintf("POST %s/issues/%d/comments", repo, n)
		},
		editComment: func(_ int, id int64) string { return fmt.Sprintf("PATCH %s/issues/comments/%d", repo, id) },
	}
}
