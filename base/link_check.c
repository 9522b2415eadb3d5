/*
 * The body of each part's link-check executable (meson.build, `layers`):
 * linked with the part's whole archive and only the parts the table lets
 * it use, it exists to fail the build when the part reaches a symbol of a
 * part it does not declare. It does nothing when run.
 */
int main(void)
{
	return 0;
}
