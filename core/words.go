package core

// PortalWord returns the deployment's portal word the client was given
// (Config.PortalWord), or "" when it was given none.
func (c *Client) PortalWord() string { return c.cfg.PortalWord }
